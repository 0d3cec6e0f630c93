CREATE TABLE "credit_offers" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"customer_id" text NOT NULL,
	"status" text NOT NULL,
	"approved_amount" integer NOT NULL,
	"min_amount" integer NOT NULL,
	"monthly_interest_rate" numeric(10, 6) NOT NULL,
	"min_installments" integer NOT NULL,
	"max_installments" integer NOT NULL,
	"valid_until" timestamp (3) with time zone NOT NULL,
	"loan_id" text,
	"spent_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "simulations" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"credit_offer_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"figures" jsonb NOT NULL,
	"valid_until" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "credit_offers" ADD CONSTRAINT "credit_offers_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "simulations" ADD CONSTRAINT "simulations_credit_offer_id_credit_offers_id_fk" FOREIGN KEY ("credit_offer_id") REFERENCES "public"."credit_offers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "simulations" ADD CONSTRAINT "simulations_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "credit_offers_one_live_idx" ON "credit_offers" USING btree ("customer_id") WHERE "credit_offers"."status" = 'available' or ("credit_offers"."status" = 'accepted' and "credit_offers"."spent_at" is null);--> statement-breakpoint
CREATE INDEX "credit_offers_created_idx" ON "credit_offers" USING btree ("partner_id","environment","created_at","id");--> statement-breakpoint
CREATE INDEX "credit_offers_valid_until_idx" ON "credit_offers" USING btree ("partner_id","environment","valid_until","id");--> statement-breakpoint
CREATE INDEX "credit_offers_customer_idx" ON "credit_offers" USING btree ("partner_id","environment","customer_id","created_at");--> statement-breakpoint
CREATE INDEX "simulations_offer_idx" ON "simulations" USING btree ("credit_offer_id","created_at");