ALTER TABLE "loan_transactions" ADD COLUMN "reference" text;--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD COLUMN "principal_amount" integer;--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD COLUMN "interest_amount" integer;--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD COLUMN "late_fee_amount" integer;--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD COLUMN "late_interest_amount" integer;--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD COLUMN "discount_amount" integer;--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD COLUMN "allocation" jsonb;--> statement-breakpoint
ALTER TABLE "loans" ADD COLUMN "repayment" jsonb;--> statement-breakpoint
CREATE UNIQUE INDEX "loan_transactions_reference_idx" ON "loan_transactions" USING btree ("loan_id","reference");