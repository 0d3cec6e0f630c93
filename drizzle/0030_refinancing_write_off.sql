ALTER TABLE "loans" ADD COLUMN "written_off_at" timestamp (3) with time zone;--> statement-breakpoint
-- hand-written: the ledger's chart of accounts gains `credit_losses` and `recoveries` (contract §17).
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_account_known";--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_account_known" CHECK ("account" IN ('loan_principal', 'disbursement_clearing', 'collections_clearing', 'iof_payable', 'interest_income', 'late_fee_income', 'late_interest_income', 'refunds_payable', 'unidentified_receipts', 'credit_losses', 'recoveries'));
