CREATE TABLE "operator_enrollments" (
	"id" text PRIMARY KEY NOT NULL,
	"operator_id" text NOT NULL,
	"approval_id" text,
	"code_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"redeemed_at" timestamp (3) with time zone,
	CONSTRAINT "operator_enrollments_code_hash_unique" UNIQUE("code_hash")
);
--> statement-breakpoint
CREATE TABLE "ops_audit_outcomes" (
	"audit_id" text PRIMARY KEY NOT NULL,
	"status" integer NOT NULL,
	"problem_code" text,
	"detail" jsonb,
	"finished_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "approvals" ALTER COLUMN "loan_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "approvals" ALTER COLUMN "partner_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "approvals" ALTER COLUMN "environment" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "operator_id" text;--> statement-breakpoint
ALTER TABLE "operator_enrollments" ADD CONSTRAINT "operator_enrollments_operator_id_operators_id_fk" FOREIGN KEY ("operator_id") REFERENCES "public"."operators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ops_audit_outcomes" ADD CONSTRAINT "ops_audit_outcomes_audit_id_ops_audit_id_fk" FOREIGN KEY ("audit_id") REFERENCES "public"."ops_audit"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "operator_enrollments_operator_idx" ON "operator_enrollments" USING btree ("operator_id");--> statement-breakpoint
CREATE INDEX "approvals_operator_idx" ON "approvals" USING btree ("operator_id");--> statement-breakpoint
-- hand-written:
-- A money approval names its loan, a staff approval its operator; never both, never neither.
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_subject" CHECK (
  ("kind" IN ('disbursement', 'payment', 'payoff', 'refund')
    AND "loan_id" IS NOT NULL AND "partner_id" IS NOT NULL AND "environment" IS NOT NULL AND "operator_id" IS NULL)
  OR ("kind" IN ('operator_creation', 'role_change', 'operator_reactivation', 'token_rotation')
    AND "operator_id" IS NOT NULL AND "loan_id" IS NULL AND "partner_id" IS NULL AND "environment" IS NULL));--> statement-breakpoint
-- The outcomes of audit rows completed in place before this release move to their own table.
INSERT INTO "ops_audit_outcomes" ("audit_id", "status", "problem_code", "detail", "finished_at")
  SELECT "id", "status", "problem_code", "detail", "finished_at" FROM "ops_audit"
   WHERE "status" IS NOT NULL AND "finished_at" IS NOT NULL;--> statement-breakpoint
-- The audit trail is append-only, for every role (the application's has no UPDATE or DELETE on
-- it either): a row and its outcome are written once and never changed nor removed.
CREATE FUNCTION "ops_audit_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'restrict_violation';
END
$$;--> statement-breakpoint
CREATE TRIGGER "ops_audit_immutable" BEFORE UPDATE OR DELETE ON "ops_audit" FOR EACH ROW EXECUTE FUNCTION "ops_audit_refuse_change"();--> statement-breakpoint
CREATE TRIGGER "ops_audit_not_truncated" BEFORE TRUNCATE ON "ops_audit" FOR EACH STATEMENT EXECUTE FUNCTION "ops_audit_refuse_change"();--> statement-breakpoint
CREATE TRIGGER "ops_audit_outcomes_immutable" BEFORE UPDATE OR DELETE ON "ops_audit_outcomes" FOR EACH ROW EXECUTE FUNCTION "ops_audit_refuse_change"();--> statement-breakpoint
CREATE TRIGGER "ops_audit_outcomes_not_truncated" BEFORE TRUNCATE ON "ops_audit_outcomes" FOR EACH STATEMENT EXECUTE FUNCTION "ops_audit_refuse_change"();--> statement-breakpoint
-- An approval is never removed; what it asks for never changes; it moves only forward — pending
-- to executing (approved: the command about to run), rejected or expired; executing (the same
-- checker, again after a retry) to approved or failed — and once decided it never changes again.
CREATE FUNCTION "approvals_guard_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'UPDATE' THEN
    RAISE EXCEPTION 'approvals are never removed: % refused', TG_OP USING ERRCODE = 'restrict_violation';
  END IF;
  IF OLD."status" NOT IN ('pending', 'executing') THEN
    RAISE EXCEPTION 'approval % is decided (%): it never changes', OLD."id", OLD."status"
      USING ERRCODE = 'restrict_violation';
  END IF;
  IF (NEW."id", NEW."kind", NEW."loan_id", NEW."partner_id", NEW."environment", NEW."operator_id",
      NEW."request", NEW."maker_id", NEW."created_at", NEW."expires_at")
     IS DISTINCT FROM
     (OLD."id", OLD."kind", OLD."loan_id", OLD."partner_id", OLD."environment", OLD."operator_id",
      OLD."request", OLD."maker_id", OLD."created_at", OLD."expires_at") THEN
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
$$;--> statement-breakpoint
CREATE TRIGGER "approvals_decided_final" BEFORE UPDATE OR DELETE ON "approvals" FOR EACH ROW EXECUTE FUNCTION "approvals_guard_change"();--> statement-breakpoint
CREATE TRIGGER "approvals_not_truncated" BEFORE TRUNCATE ON "approvals" FOR EACH STATEMENT EXECUTE FUNCTION "approvals_guard_change"();
