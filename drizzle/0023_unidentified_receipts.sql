CREATE TABLE "receipt_transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"end_to_end_id" text NOT NULL,
	"environment" text NOT NULL,
	"type" text NOT NULL,
	"amount" bigint NOT NULL,
	"reference" text,
	"actor" jsonb,
	"approved_by" jsonb,
	"occurred_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "loan_transactions_reference_idx";--> statement-breakpoint
ALTER TABLE "received_pix" ALTER COLUMN "amount" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "loan_transactions" ALTER COLUMN "amount" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "loan_transactions" ALTER COLUMN "refund_amount" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "loans" ALTER COLUMN "refund_due_amount" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "ledger_entries" ALTER COLUMN "transaction_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "ledger_entries" ALTER COLUMN "partner_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "ledger_entries" ALTER COLUMN "loan_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "received_pix" ADD COLUMN "matched_by" jsonb;--> statement-breakpoint
ALTER TABLE "received_pix" ADD COLUMN "match_approved_by" jsonb;--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD COLUMN "reference_source" text;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD COLUMN "receipt_transaction_id" text;--> statement-breakpoint
ALTER TABLE "receipt_transactions" ADD CONSTRAINT "receipt_transactions_end_to_end_id_received_pix_end_to_end_id_fk" FOREIGN KEY ("end_to_end_id") REFERENCES "public"."received_pix"("end_to_end_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "receipt_transactions_step_idx" ON "receipt_transactions" USING btree ("end_to_end_id","type");--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_receipt_transaction_id_receipt_transactions_id_fk" FOREIGN KEY ("receipt_transaction_id") REFERENCES "public"."receipt_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ledger_entries_receipt_transaction_idx" ON "ledger_entries" USING btree ("receipt_transaction_id");--> statement-breakpoint
CREATE UNIQUE INDEX "loan_transactions_reference_idx" ON "loan_transactions" USING btree ("loan_id","reference_source","reference");--> statement-breakpoint
-- hand-written:
-- A reference is unique per loan and source (contract §13): a Pix's end-to-end id never collides
-- with what ops named a payment. Transactions written before: a Pix's where a received Pix names
-- it, ops' (or the sandbox twin's) otherwise.
UPDATE "loan_transactions" SET "reference_source" = CASE
    WHEN "id" IN (SELECT "transaction_id" FROM "received_pix" WHERE "transaction_id" IS NOT NULL) THEN 'pix'
    ELSE 'manual' END
  WHERE "reference" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD CONSTRAINT "loan_transactions_reference_source_known" CHECK ("reference_source" IN ('pix', 'manual'));--> statement-breakpoint
-- A worker of the release before writes references without their source while a deploy rolls:
-- a Pix's end-to-end id (a received Pix of the loan, under its old step) is the payment system's,
-- any other reference ops'. This release always names it.
CREATE FUNCTION "loan_transactions_default_reference_source"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."reference" IS NOT NULL AND NEW."reference_source" IS NULL THEN
    NEW."reference_source" := CASE
      WHEN NEW."step" = 'reference:' || NEW."reference" AND EXISTS (
        SELECT 1 FROM "received_pix" WHERE "end_to_end_id" = NEW."reference" AND "loan_id" = NEW."loan_id")
      THEN 'pix' ELSE 'manual' END;
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER "loan_transactions_reference_source" BEFORE INSERT ON "loan_transactions" FOR EACH ROW EXECUTE FUNCTION "loan_transactions_default_reference_source"();--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD CONSTRAINT "loan_transactions_reference_has_source" CHECK (("reference" IS NULL) = ("reference_source" IS NULL));--> statement-breakpoint
-- Receipt transactions: money no loan claims (an unmatched Pix), append-only like the entries.
ALTER TABLE "receipt_transactions" ADD CONSTRAINT "receipt_transactions_type_known" CHECK ("type" IN ('received', 'returned', 'refund_sent'));--> statement-breakpoint
ALTER TABLE "receipt_transactions" ADD CONSTRAINT "receipt_transactions_amount_positive" CHECK ("amount" > 0);--> statement-breakpoint
CREATE TRIGGER "receipt_transactions_immutable" BEFORE UPDATE OR DELETE ON "receipt_transactions" FOR EACH ROW EXECUTE FUNCTION "ledger_entries_refuse_change"();--> statement-breakpoint
CREATE TRIGGER "receipt_transactions_not_truncated" BEFORE TRUNCATE ON "receipt_transactions" FOR EACH STATEMENT EXECUTE FUNCTION "ledger_entries_refuse_change"();--> statement-breakpoint
-- An entry belongs to exactly one transaction: a loan's (with its loan and tenant) or a receipt's.
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_one_transaction" CHECK (num_nonnulls("transaction_id", "receipt_transaction_id") = 1);--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_loan_of_loan_transaction" CHECK (("loan_id" IS NULL) = ("transaction_id" IS NULL) AND ("partner_id" IS NULL) = ("loan_id" IS NULL));--> statement-breakpoint
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_account_known";--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_account_known" CHECK ("account" IN ('loan_principal', 'disbursement_clearing', 'collections_clearing', 'iof_payable', 'interest_income', 'late_fee_income', 'late_interest_income', 'refunds_payable', 'unidentified_receipts'));--> statement-breakpoint
-- Each transaction's debits equal its credits, checked at commit: a loan's, or a receipt's.
CREATE OR REPLACE FUNCTION "ledger_entries_check_balance"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE imbalance bigint;
BEGIN
  IF NEW."transaction_id" IS NOT NULL THEN
    SELECT COALESCE(SUM(CASE WHEN "direction" = 'debit' THEN "amount" ELSE -"amount" END), 0)
      INTO imbalance FROM "ledger_entries" WHERE "transaction_id" = NEW."transaction_id";
  ELSE
    SELECT COALESCE(SUM(CASE WHEN "direction" = 'debit' THEN "amount" ELSE -"amount" END), 0)
      INTO imbalance FROM "ledger_entries" WHERE "receipt_transaction_id" = NEW."receipt_transaction_id";
  END IF;
  IF imbalance <> 0 THEN
    RAISE EXCEPTION 'ledger transaction % does not balance: debits - credits = %',
      COALESCE(NEW."transaction_id", NEW."receipt_transaction_id"), imbalance
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
-- Pix stored unmatched before this migration: their money is in the lender's account, owed to
-- nobody yet. Posted now, dated when each arrived (the payer's time, never after it was stored).
INSERT INTO "receipt_transactions" ("id", "end_to_end_id", "environment", "type", "amount", "occurred_at")
  SELECT 'txn_' || md5('received:' || "end_to_end_id"), "end_to_end_id", 'production', 'received', "amount",
         LEAST("paid_at", "received_at")
    FROM "received_pix" WHERE "status" = 'unmatched';--> statement-breakpoint
INSERT INTO "ledger_entries" ("receipt_transaction_id", "environment", "account", "direction", "amount", "occurred_at")
  SELECT r."id", r."environment", e."account", e."direction", r."amount", r."occurred_at"
    FROM "receipt_transactions" r
    CROSS JOIN (VALUES ('collections_clearing', 'debit'), ('unidentified_receipts', 'credit')) AS e ("account", "direction")
    WHERE r."type" = 'received';
