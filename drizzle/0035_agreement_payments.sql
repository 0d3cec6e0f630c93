ALTER TABLE "loan_agreements" ADD COLUMN "book" jsonb;--> statement-breakpoint
ALTER TABLE "loans" ADD COLUMN "renegotiated_rows" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
-- hand-written: the ledger's chart of accounts gains `agreement_discounts` (contract §17: the discount an agreement grants, an expense), beside 0034's `refinancing_clearing`.
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_account_known";--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_account_known" CHECK ("account" IN ('loan_principal', 'disbursement_clearing', 'collections_clearing', 'iof_payable', 'interest_income', 'late_fee_income', 'late_interest_income', 'refunds_payable', 'unidentified_receipts', 'credit_losses', 'recoveries', 'refinancing_clearing', 'agreement_discounts'));
