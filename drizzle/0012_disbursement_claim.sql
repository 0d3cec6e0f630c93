ALTER TABLE "loans" ADD COLUMN "disbursement_status" text DEFAULT 'pending' NOT NULL;--> statement-breakpoint
ALTER TABLE "loans" ADD COLUMN "iof_terms" jsonb;--> statement-breakpoint
ALTER TABLE "loans" ADD COLUMN "release_adjustment" jsonb;--> statement-breakpoint
-- Loans disbursed (or failed) before the claim existed.
UPDATE "loans" SET "disbursement_status" = 'confirmed' WHERE "disbursed_at" IS NOT NULL;--> statement-breakpoint
UPDATE "loans" SET "disbursement_status" = 'failed' WHERE "status" = 'error' AND "error"->>'code' = 'disbursement_failed';
