CREATE TABLE "loan_signers" (
	"loan_id" text NOT NULL,
	"position" integer NOT NULL,
	"name" text NOT NULL,
	"cpf" text NOT NULL,
	"email" text,
	"signed_at" timestamp (3) with time zone,
	"ip_address" text,
	"user_agent" text,
	"signed_sha256" text,
	CONSTRAINT "loan_signers_loan_id_cpf_pk" PRIMARY KEY("loan_id","cpf")
);
--> statement-breakpoint
CREATE TABLE "loan_transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"loan_id" text NOT NULL,
	"step" text NOT NULL,
	"type" text NOT NULL,
	"amount" integer NOT NULL,
	"installment_number" integer,
	"occurred_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "loans" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"customer_id" text NOT NULL,
	"credit_offer_id" text NOT NULL,
	"simulation_id" text NOT NULL,
	"status" text NOT NULL,
	"figures" jsonb NOT NULL,
	"disbursement_account" jsonb NOT NULL,
	"contract_sha256" text NOT NULL,
	"contract_key" text NOT NULL,
	"signing_token_hash" text NOT NULL,
	"signature_deadline" timestamp (3) with time zone NOT NULL,
	"disbursed_at" timestamp (3) with time zone,
	"paid_installments" integer DEFAULT 0 NOT NULL,
	"paid_at" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"error" jsonb,
	"cancellation_reason" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "loan_signers" ADD CONSTRAINT "loan_signers_loan_id_loans_id_fk" FOREIGN KEY ("loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD CONSTRAINT "loan_transactions_loan_id_loans_id_fk" FOREIGN KEY ("loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "loans" ADD CONSTRAINT "loans_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "loans" ADD CONSTRAINT "loans_credit_offer_id_credit_offers_id_fk" FOREIGN KEY ("credit_offer_id") REFERENCES "public"."credit_offers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "loans" ADD CONSTRAINT "loans_simulation_id_simulations_id_fk" FOREIGN KEY ("simulation_id") REFERENCES "public"."simulations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "loan_signers_position_idx" ON "loan_signers" USING btree ("loan_id","position");--> statement-breakpoint
CREATE UNIQUE INDEX "loan_transactions_step_idx" ON "loan_transactions" USING btree ("loan_id","step");--> statement-breakpoint
CREATE INDEX "loan_transactions_loan_idx" ON "loan_transactions" USING btree ("loan_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "loans_signing_token_idx" ON "loans" USING btree ("signing_token_hash");--> statement-breakpoint
CREATE INDEX "loans_created_idx" ON "loans" USING btree ("partner_id","environment","created_at","id");--> statement-breakpoint
CREATE INDEX "loans_customer_idx" ON "loans" USING btree ("partner_id","environment","customer_id","created_at");