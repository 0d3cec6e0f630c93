CREATE TABLE "biometric_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"customer_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"status" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp (3) with time zone,
	CONSTRAINT "biometric_sessions_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "customers" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"status" text NOT NULL,
	"cpf" text NOT NULL,
	"cnpj" text,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"phone" text NOT NULL,
	"trading_name" text,
	"external_id" text,
	"kyc" jsonb NOT NULL,
	"denied_reason" text,
	"credit_analysis" jsonb,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "documents" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"customer_id" text NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"file_name" text NOT NULL,
	"content_type" text NOT NULL,
	"size_bytes" integer NOT NULL,
	"sha256" text NOT NULL,
	"storage_key" text NOT NULL,
	"uploaded_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"seq" bigserial NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "events_seq_unique" UNIQUE("seq")
);
--> statement-breakpoint
ALTER TABLE "biometric_sessions" ADD CONSTRAINT "biometric_sessions_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "documents" ADD CONSTRAINT "documents_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "biometric_sessions_customer_idx" ON "biometric_sessions" USING btree ("customer_id","status");--> statement-breakpoint
CREATE UNIQUE INDEX "customers_identity_idx" ON "customers" USING btree ("partner_id","environment","cpf",coalesce("cnpj", ''));--> statement-breakpoint
CREATE INDEX "customers_created_idx" ON "customers" USING btree ("partner_id","environment","created_at","id");--> statement-breakpoint
CREATE INDEX "customers_updated_idx" ON "customers" USING btree ("partner_id","environment","updated_at","id");--> statement-breakpoint
CREATE INDEX "customers_name_idx" ON "customers" USING btree ("partner_id","environment","name","id");--> statement-breakpoint
CREATE INDEX "customers_external_id_idx" ON "customers" USING btree ("partner_id","environment","external_id");--> statement-breakpoint
CREATE INDEX "documents_customer_idx" ON "documents" USING btree ("partner_id","environment","customer_id","created_at","id");--> statement-breakpoint
CREATE INDEX "events_seq_idx" ON "events" USING btree ("partner_id","environment","seq");--> statement-breakpoint
CREATE INDEX "events_type_idx" ON "events" USING btree ("partner_id","environment","type","seq");