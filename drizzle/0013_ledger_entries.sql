CREATE TABLE "ledger_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"transaction_id" text NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"loan_id" text NOT NULL,
	"account" text NOT NULL,
	"direction" text NOT NULL,
	"amount" bigint NOT NULL,
	"occurred_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_transaction_id_loan_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."loan_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_loan_id_loans_id_fk" FOREIGN KEY ("loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ledger_entries_transaction_idx" ON "ledger_entries" USING btree ("transaction_id");--> statement-breakpoint
CREATE INDEX "ledger_entries_loan_idx" ON "ledger_entries" USING btree ("loan_id","account");--> statement-breakpoint
CREATE INDEX "ledger_entries_account_idx" ON "ledger_entries" USING btree ("environment","account","occurred_at");--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_amount_positive" CHECK ("amount" > 0);--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_direction_known" CHECK ("direction" IN ('debit', 'credit'));--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_account_known" CHECK ("account" IN ('loan_principal', 'disbursement_clearing', 'collections_clearing', 'iof_payable', 'interest_income', 'late_fee_income', 'late_interest_income', 'refunds_payable'));--> statement-breakpoint
-- Entries are never changed nor removed: a correction is a new transaction.
CREATE FUNCTION "ledger_entries_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger entries are append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END
$$;--> statement-breakpoint
CREATE TRIGGER "ledger_entries_immutable" BEFORE UPDATE OR DELETE ON "ledger_entries" FOR EACH ROW EXECUTE FUNCTION "ledger_entries_refuse_change"();--> statement-breakpoint
CREATE TRIGGER "ledger_entries_not_truncated" BEFORE TRUNCATE ON "ledger_entries" FOR EACH STATEMENT EXECUTE FUNCTION "ledger_entries_refuse_change"();--> statement-breakpoint
-- Each transaction's debits equal its credits, checked at commit (its entries are inserted one by one).
CREATE FUNCTION "ledger_entries_check_balance"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE imbalance bigint;
BEGIN
  SELECT COALESCE(SUM(CASE WHEN "direction" = 'debit' THEN "amount" ELSE -"amount" END), 0)
    INTO imbalance FROM "ledger_entries" WHERE "transaction_id" = NEW."transaction_id";
  IF imbalance <> 0 THEN
    RAISE EXCEPTION 'ledger transaction % does not balance: debits - credits = %', NEW."transaction_id", imbalance
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "ledger_entries_balanced" AFTER INSERT ON "ledger_entries" DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "ledger_entries_check_balance"();
