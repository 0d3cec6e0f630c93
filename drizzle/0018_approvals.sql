CREATE TABLE "approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"loan_id" text NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"request" jsonb NOT NULL,
	"maker_id" text NOT NULL,
	"checker_id" text,
	"status" text NOT NULL,
	"outcome" jsonb,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"decided_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE INDEX "approvals_status_idx" ON "approvals" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "approvals_loan_idx" ON "approvals" USING btree ("loan_id");