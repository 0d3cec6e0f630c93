ALTER TABLE "approvals" ADD COLUMN "end_to_end_id" text;--> statement-breakpoint
-- hand-written:
-- A Pix no charge claimed, matched to a loan (`pix_match`: the Pix and the loan) or returned
-- (`pix_return`: the Pix, production's) by hand under dual control.
ALTER TABLE "approvals" DROP CONSTRAINT "approvals_subject";--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_subject" CHECK (
  ("kind" IN ('disbursement', 'payment', 'payoff', 'refund')
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
    AND "environment" IS NULL AND "end_to_end_id" IS NULL));--> statement-breakpoint
-- What an approval asks for never changes: its Pix included.
CREATE OR REPLACE FUNCTION "approvals_guard_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'UPDATE' THEN
    RAISE EXCEPTION 'approvals are never removed: % refused', TG_OP USING ERRCODE = 'restrict_violation';
  END IF;
  IF OLD."status" NOT IN ('pending', 'executing') THEN
    RAISE EXCEPTION 'approval % is decided (%): it never changes', OLD."id", OLD."status"
      USING ERRCODE = 'restrict_violation';
  END IF;
  IF (NEW."id", NEW."kind", NEW."loan_id", NEW."partner_id", NEW."environment", NEW."operator_id",
      NEW."end_to_end_id", NEW."request", NEW."maker_id", NEW."created_at", NEW."expires_at")
     IS DISTINCT FROM
     (OLD."id", OLD."kind", OLD."loan_id", OLD."partner_id", OLD."environment", OLD."operator_id",
      OLD."end_to_end_id", OLD."request", OLD."maker_id", OLD."created_at", OLD."expires_at") THEN
    RAISE EXCEPTION 'approval %: what it asks for never changes', OLD."id" USING ERRCODE = 'restrict_violation';
  END IF;
  IF NOT ((OLD."status" = 'pending' AND NEW."status" IN ('executing', 'rejected', 'expired'))
       OR (OLD."status" = 'executing' AND NEW."status" IN ('executing', 'approved', 'failed')
           AND NEW."checker_id" IS NOT DISTINCT FROM OLD."checker_id")) THEN
    RAISE EXCEPTION 'approval %: % to % (checker %) is not a step it can take', OLD."id", OLD."status", NEW."status", NEW."checker_id"
      USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END
$$;
