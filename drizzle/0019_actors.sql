ALTER TABLE "events" ADD COLUMN "actor" jsonb;--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD COLUMN "actor" jsonb;--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD COLUMN "approved_by" jsonb;