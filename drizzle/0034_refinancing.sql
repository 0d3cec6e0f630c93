CREATE TABLE "loan_refinancings" (
	"loan_id" text NOT NULL,
	"refinanced_loan_id" text NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"payoff_amount" bigint NOT NULL,
	"payoff_date" text NOT NULL,
	"paid_through_days" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "loan_refinancings_loan_id_refinanced_loan_id_pk" PRIMARY KEY("loan_id","refinanced_loan_id")
);
--> statement-breakpoint
ALTER TABLE "loans" ADD COLUMN "finished_reason" text;--> statement-breakpoint
ALTER TABLE "loan_refinancings" ADD CONSTRAINT "loan_refinancings_loan_id_loans_id_fk" FOREIGN KEY ("loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "loan_refinancings" ADD CONSTRAINT "loan_refinancings_refinanced_loan_id_loans_id_fk" FOREIGN KEY ("refinanced_loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "loan_refinancings_live_idx" ON "loan_refinancings" USING btree ("refinanced_loan_id") WHERE "loan_refinancings"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "loan_refinancings_refinanced_idx" ON "loan_refinancings" USING btree ("refinanced_loan_id");--> statement-breakpoint
-- hand-written: a refinancing's status is one the service knows, pays off a positive amount, and
-- never names its own loan; the ledger's chart of accounts gains `refinancing_clearing` (§17).
ALTER TABLE "loan_refinancings" ADD CONSTRAINT "loan_refinancings_status_known" CHECK ("status" IN ('pending', 'released', 'void'));--> statement-breakpoint
ALTER TABLE "loan_refinancings" ADD CONSTRAINT "loan_refinancings_payoff_positive" CHECK ("payoff_amount" > 0);--> statement-breakpoint
ALTER TABLE "loan_refinancings" ADD CONSTRAINT "loan_refinancings_other_loan" CHECK ("loan_id" <> "refinanced_loan_id");--> statement-breakpoint
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_account_known";--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_account_known" CHECK ("account" IN ('loan_principal', 'disbursement_clearing', 'collections_clearing', 'iof_payable', 'interest_income', 'late_fee_income', 'late_interest_income', 'refunds_payable', 'unidentified_receipts', 'credit_losses', 'recoveries', 'refinancing_clearing'));
