CREATE TABLE "assignment_transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"assignment_id" text NOT NULL,
	"type" text NOT NULL,
	"remittance_date" date,
	"amount" bigint NOT NULL,
	"reference" text NOT NULL,
	"actor" jsonb NOT NULL,
	"paid_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD COLUMN "assignment_transaction_id" text;--> statement-breakpoint
ALTER TABLE "assignment_transactions" ADD CONSTRAINT "assignment_transactions_assignment_id_assignments_id_fk" FOREIGN KEY ("assignment_id") REFERENCES "public"."assignments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "assignment_transactions_price_idx" ON "assignment_transactions" USING btree ("assignment_id") WHERE "assignment_transactions"."type" = 'price_received';--> statement-breakpoint
CREATE UNIQUE INDEX "assignment_transactions_remittance_idx" ON "assignment_transactions" USING btree ("assignment_id","remittance_date") WHERE "assignment_transactions"."type" = 'remitted';--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_assignment_transaction_id_assignment_transactions_id_fk" FOREIGN KEY ("assignment_transaction_id") REFERENCES "public"."assignment_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ledger_entries_assignment_transaction_idx" ON "ledger_entries" USING btree ("assignment_transaction_id");--> statement-breakpoint
-- hand-written: a sale's money (contract §19, docs/assignments.md): what each row is, append-only like the ledger's entries.
ALTER TABLE "assignment_transactions" ADD CONSTRAINT "assignment_transactions_type_known" CHECK ("type" IN ('price_received', 'remitted'));--> statement-breakpoint
ALTER TABLE "assignment_transactions" ADD CONSTRAINT "assignment_transactions_amount_positive" CHECK ("amount" > 0);--> statement-breakpoint
ALTER TABLE "assignment_transactions" ADD CONSTRAINT "assignment_transactions_day_of_remittance" CHECK (("type" = 'remitted') = ("remittance_date" IS NOT NULL));--> statement-breakpoint
CREATE TRIGGER "assignment_transactions_immutable" BEFORE UPDATE OR DELETE ON "assignment_transactions" FOR EACH ROW EXECUTE FUNCTION "ledger_entries_refuse_change"();--> statement-breakpoint
CREATE TRIGGER "assignment_transactions_not_truncated" BEFORE TRUNCATE ON "assignment_transactions" FOR EACH STATEMENT EXECUTE FUNCTION "ledger_entries_refuse_change"();--> statement-breakpoint
-- hand-written: an entry belongs to exactly one transaction: a loan's (with its loan and tenant), a receipt's or an assignment's.
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_one_transaction";--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_one_transaction" CHECK (num_nonnulls("transaction_id", "receipt_transaction_id", "assignment_transaction_id") = 1);--> statement-breakpoint
-- hand-written: each transaction's debits equal its credits, checked at commit: a loan's, a receipt's or an assignment's.
CREATE OR REPLACE FUNCTION "ledger_entries_check_balance"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE imbalance bigint;
BEGIN
  IF NEW."transaction_id" IS NOT NULL THEN
    SELECT COALESCE(SUM(CASE WHEN "direction" = 'debit' THEN "amount" ELSE -"amount" END), 0)
      INTO imbalance FROM "ledger_entries" WHERE "transaction_id" = NEW."transaction_id";
  ELSIF NEW."receipt_transaction_id" IS NOT NULL THEN
    SELECT COALESCE(SUM(CASE WHEN "direction" = 'debit' THEN "amount" ELSE -"amount" END), 0)
      INTO imbalance FROM "ledger_entries" WHERE "receipt_transaction_id" = NEW."receipt_transaction_id";
  ELSE
    SELECT COALESCE(SUM(CASE WHEN "direction" = 'debit' THEN "amount" ELSE -"amount" END), 0)
      INTO imbalance FROM "ledger_entries" WHERE "assignment_transaction_id" = NEW."assignment_transaction_id";
  END IF;
  IF imbalance <> 0 THEN
    RAISE EXCEPTION 'ledger transaction % does not balance: debits - credits = %',
      COALESCE(NEW."transaction_id", NEW."receipt_transaction_id", NEW."assignment_transaction_id"), imbalance
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$$;
