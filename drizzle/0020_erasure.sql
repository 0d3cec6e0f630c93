CREATE TABLE "customer_erasures" (
	"customer_id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"requested_by" jsonb NOT NULL,
	"erased_at" timestamp (3) with time zone NOT NULL,
	"retained_until" timestamp (3) with time zone,
	"files_deleted_at" timestamp (3) with time zone,
	"completed_at" timestamp (3) with time zone
);
--> statement-breakpoint
DROP INDEX "customers_identity_idx";--> statement-breakpoint
ALTER TABLE "customers" ADD COLUMN "erased_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "customers" ADD COLUMN "identity_hash" text;--> statement-breakpoint
ALTER TABLE "customers" ADD COLUMN "previous_customer_id" text;--> statement-breakpoint
ALTER TABLE "customer_erasures" ADD CONSTRAINT "customer_erasures_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "customers_identity_hash_idx" ON "customers" USING btree ("partner_id","environment","identity_hash") WHERE "customers"."identity_hash" is not null;--> statement-breakpoint
CREATE INDEX "events_customer_idx" ON "events" USING btree ("partner_id","environment",coalesce("data"->>'customer_id', "data"->>'id'));--> statement-breakpoint
CREATE UNIQUE INDEX "customers_identity_idx" ON "customers" USING btree ("partner_id","environment","cpf",coalesce("cnpj", '')) WHERE "customers"."erased_at" is null;