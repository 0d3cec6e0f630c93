CREATE TABLE "devolucoes" (
	"id" text PRIMARY KEY NOT NULL,
	"refund_id" text NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"loan_id" text NOT NULL,
	"end_to_end_id" text NOT NULL,
	"amount" bigint NOT NULL,
	"origin" text NOT NULL,
	"status" text NOT NULL,
	"rtr_id" text,
	"motivo" text,
	"transaction_id" text,
	"actor" jsonb,
	"approved_by" jsonb,
	"requested_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"settled_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "devolucoes" ADD CONSTRAINT "devolucoes_loan_id_loans_id_fk" FOREIGN KEY ("loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "devolucoes" ADD CONSTRAINT "devolucoes_end_to_end_id_received_pix_end_to_end_id_fk" FOREIGN KEY ("end_to_end_id") REFERENCES "public"."received_pix"("end_to_end_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "devolucoes" ADD CONSTRAINT "devolucoes_transaction_id_loan_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."loan_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "devolucoes_loan_idx" ON "devolucoes" USING btree ("loan_id","requested_at");--> statement-breakpoint
CREATE INDEX "devolucoes_refund_idx" ON "devolucoes" USING btree ("refund_id");--> statement-breakpoint
CREATE INDEX "devolucoes_pix_idx" ON "devolucoes" USING btree ("end_to_end_id");--> statement-breakpoint
CREATE INDEX "devolucoes_failed_idx" ON "devolucoes" USING btree ("settled_at") WHERE "devolucoes"."status" = 'failed';--> statement-breakpoint
-- hand-written:
-- A devolução (contract §16): a positive amount of a production loan's Pix, an id the API Pix
-- takes (≤ 35 of [a-zA-Z0-9]), a known status and origin; booked exactly when returned.
ALTER TABLE "devolucoes" ADD CONSTRAINT "devolucoes_valid" CHECK (
  "amount" > 0
  AND "id" ~ '^[a-zA-Z0-9]{1,35}$'
  AND "environment" = 'production'
  AND "origin" IN ('automatic', 'ops')
  AND "status" IN ('requested', 'processing', 'returned', 'failed')
  AND (("status" = 'returned') = ("transaction_id" IS NOT NULL)));--> statement-breakpoint
-- A devolução that ended never changes (returned: booked; failed: its money due back again), and
-- none is ever removed; what it asks for never changes.
CREATE FUNCTION "devolucoes_guard_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'UPDATE' THEN
    RAISE EXCEPTION 'devoluções are never removed: % refused', TG_OP USING ERRCODE = 'restrict_violation';
  END IF;
  IF OLD."status" IN ('returned', 'failed') THEN
    RAISE EXCEPTION 'devolução % ended (%): it never changes', OLD."id", OLD."status"
      USING ERRCODE = 'restrict_violation';
  END IF;
  IF (NEW."id", NEW."refund_id", NEW."partner_id", NEW."environment", NEW."loan_id",
      NEW."end_to_end_id", NEW."amount", NEW."origin", NEW."actor", NEW."approved_by",
      NEW."requested_at")
     IS DISTINCT FROM
     (OLD."id", OLD."refund_id", OLD."partner_id", OLD."environment", OLD."loan_id",
      OLD."end_to_end_id", OLD."amount", OLD."origin", OLD."actor", OLD."approved_by",
      OLD."requested_at") THEN
    RAISE EXCEPTION 'devolução %: what it asks for never changes', OLD."id" USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER "devolucoes_guard_change" BEFORE UPDATE OR DELETE ON "devolucoes"
  FOR EACH ROW EXECUTE FUNCTION "devolucoes_guard_change"();--> statement-breakpoint
CREATE TRIGGER "devolucoes_no_truncate" BEFORE TRUNCATE ON "devolucoes"
  FOR EACH STATEMENT EXECUTE FUNCTION "devolucoes_guard_change"();--> statement-breakpoint
-- Ops ask for a refund by devolução under dual control (`devolucao`, a money approval: the loan named).
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
    AND "environment" IS NULL AND "end_to_end_id" IS NULL));
