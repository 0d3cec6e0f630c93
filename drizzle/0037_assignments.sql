CREATE TABLE "assignment_loans" (
	"assignment_id" text NOT NULL,
	"loan_id" text NOT NULL,
	"partner_id" text NOT NULL,
	"live" boolean DEFAULT true NOT NULL,
	"rows" jsonb,
	"price" bigint,
	"carrying" jsonb,
	CONSTRAINT "assignment_loans_assignment_id_loan_id_pk" PRIMARY KEY("assignment_id","loan_id")
);
--> statement-breakpoint
CREATE TABLE "assignments" (
	"id" text PRIMARY KEY NOT NULL,
	"environment" text NOT NULL,
	"assignee_name" text NOT NULL,
	"assignee_cnpj" text NOT NULL,
	"discount_rate_monthly" text NOT NULL,
	"settlement_date" date NOT NULL,
	"status" text NOT NULL,
	"price" bigint,
	"created_by" text NOT NULL,
	"submitted_by" text,
	"approval_id" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"submitted_at" timestamp (3) with time zone,
	"settled_at" timestamp (3) with time zone,
	"cancelled_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "loans" ADD COLUMN "assignment_id" text;--> statement-breakpoint
ALTER TABLE "loans" ADD COLUMN "assigned_to" jsonb;--> statement-breakpoint
ALTER TABLE "loans" ADD COLUMN "assigned_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "assignment_loans" ADD CONSTRAINT "assignment_loans_assignment_id_assignments_id_fk" FOREIGN KEY ("assignment_id") REFERENCES "public"."assignments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "assignment_loans" ADD CONSTRAINT "assignment_loans_loan_id_loans_id_fk" FOREIGN KEY ("loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "assignment_loans_live_idx" ON "assignment_loans" USING btree ("loan_id") WHERE "assignment_loans"."live";--> statement-breakpoint
CREATE INDEX "assignments_created_idx" ON "assignments" USING btree ("created_at","id");--> statement-breakpoint
-- hand-written: the ledger's chart of accounts gains `assignment_receivable`, `assignment_result` and `payable_to_assignee` (contract §19: loans sold), beside 0035's list.
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_account_known";--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_account_known" CHECK ("account" IN ('loan_principal', 'disbursement_clearing', 'collections_clearing', 'iof_payable', 'interest_income', 'late_fee_income', 'late_interest_income', 'refunds_payable', 'unidentified_receipts', 'credit_losses', 'recoveries', 'refinancing_clearing', 'agreement_discounts', 'assignment_receivable', 'assignment_result', 'payable_to_assignee'));--> statement-breakpoint
-- hand-written: an approval of kind `assignment` (a batch's settlement, contract §19) names the batch in its request only; production's.
ALTER TABLE "approvals" DROP CONSTRAINT "approvals_subject";--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_subject" CHECK (
  ("kind" IN ('disbursement', 'payment', 'payoff', 'refund', 'devolucao')
    AND "loan_id" IS NOT NULL AND "partner_id" IS NOT NULL AND "environment" IS NOT NULL
    AND "operator_id" IS NULL AND "end_to_end_id" IS NULL)
  OR ("kind" = 'pix_match'
    AND "end_to_end_id" IS NOT NULL AND "loan_id" IS NOT NULL AND "partner_id" IS NOT NULL
    AND "environment" = 'production' AND "operator_id" IS NULL)
  OR ("kind" = 'pix_return'
    AND "end_to_end_id" IS NOT NULL AND "environment" = 'production'
    AND "loan_id" IS NULL AND "partner_id" IS NULL AND "operator_id" IS NULL)
  OR ("kind" IN ('operator_creation', 'role_change', 'operator_reactivation', 'token_rotation')
    AND "operator_id" IS NOT NULL AND "loan_id" IS NULL AND "partner_id" IS NULL
    AND "environment" IS NULL AND "end_to_end_id" IS NULL)
  OR ("kind" = 'assignment'
    AND "environment" = 'production' AND "request" ->> 'assignment_id' IS NOT NULL
    AND "loan_id" IS NULL AND "partner_id" IS NULL AND "operator_id" IS NULL
    AND "end_to_end_id" IS NULL));--> statement-breakpoint
-- hand-written: a batch's states and what each needs; a loan's sale names its batch and buyer together.
ALTER TABLE "assignments" ADD CONSTRAINT "assignments_status_known" CHECK ("status" IN ('draft', 'submitted', 'settled', 'cancelled'));--> statement-breakpoint
ALTER TABLE "assignments" ADD CONSTRAINT "assignments_settled_priced" CHECK ("status" <> 'settled' OR ("price" IS NOT NULL AND "settled_at" IS NOT NULL AND "approval_id" IS NOT NULL));--> statement-breakpoint
ALTER TABLE "loans" ADD CONSTRAINT "loans_assignment_whole" CHECK (("assignment_id" IS NULL) = ("assigned_to" IS NULL) AND ("assignment_id" IS NULL) = ("assigned_at" IS NULL));
