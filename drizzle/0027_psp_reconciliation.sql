CREATE TABLE "reconciliation_discrepancies" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"date" date NOT NULL,
	"kind" text NOT NULL,
	"end_to_end_id" text,
	"reference" text,
	"psp_amount" bigint,
	"booked_amount" bigint,
	"action" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reconciliation_reports" (
	"date" date PRIMARY KEY NOT NULL,
	"status" text NOT NULL,
	"runs" integer DEFAULT 0 NOT NULL,
	"requested_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp (3) with time zone,
	"failure" text,
	"psp_pix_count" integer,
	"psp_pix_amount" bigint,
	"booked_pix_count" integer,
	"booked_pix_amount" bigint,
	"psp_devolucao_count" integer,
	"psp_devolucao_amount" bigint,
	"booked_devolucao_count" integer,
	"booked_devolucao_amount" bigint,
	"psp_payout_count" integer,
	"psp_payout_amount" bigint,
	"booked_payout_count" integer,
	"booked_payout_amount" bigint,
	"collections_clearing_debits" bigint,
	"collections_clearing_pix_debits" bigint,
	"disbursement_clearing_credits" bigint
);
--> statement-breakpoint
ALTER TABLE "received_pix" ADD COLUMN "reconciliation_date" date;--> statement-breakpoint
ALTER TABLE "reconciliation_discrepancies" ADD CONSTRAINT "reconciliation_discrepancies_date_reconciliation_reports_date_fk" FOREIGN KEY ("date") REFERENCES "public"."reconciliation_reports"("date") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "reconciliation_discrepancies_date_idx" ON "reconciliation_discrepancies" USING btree ("date","kind");--> statement-breakpoint
CREATE INDEX "received_pix_paid_at_idx" ON "received_pix" USING btree ("paid_at");--> statement-breakpoint
-- hand-written: the report's vocabularies (src/domain/reconciliation/report.ts), held by the database too.
ALTER TABLE "reconciliation_reports" ADD CONSTRAINT "reconciliation_reports_status_check"
  CHECK ("status" IN ('running', 'matched', 'discrepancies', 'failed'));--> statement-breakpoint
ALTER TABLE "reconciliation_discrepancies" ADD CONSTRAINT "reconciliation_discrepancies_kind_check"
  CHECK ("kind" IN ('missing_notification', 'unknown_to_psp', 'amount_mismatch', 'not_booked',
    'devolucao_not_booked', 'devolucao_unknown_to_psp', 'devolucao_amount_mismatch',
    'payout_not_booked', 'payout_unknown_to_psp', 'payout_amount_mismatch', 'clearing_mismatch'));--> statement-breakpoint
ALTER TABLE "reconciliation_discrepancies" ADD CONSTRAINT "reconciliation_discrepancies_action_check"
  CHECK ("action" IN ('booked_missing_notification', 'none'));
