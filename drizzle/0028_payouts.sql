CREATE TABLE "payouts" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"loan_id" text NOT NULL,
	"amount" bigint NOT NULL,
	"beneficiary" jsonb NOT NULL,
	"status" text NOT NULL,
	"psp_payout_id" text,
	"end_to_end_id" text,
	"failure_reason" text,
	"return_reason" text,
	"settled_at" timestamp (3) with time zone,
	"returned_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_loan_id_loans_id_fk" FOREIGN KEY ("loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "payouts_loan_idx" ON "payouts" USING btree ("loan_id");--> statement-breakpoint
CREATE UNIQUE INDEX "payouts_psp_idx" ON "payouts" USING btree ("psp_payout_id") WHERE "payouts"."psp_payout_id" is not null;--> statement-breakpoint
CREATE INDEX "payouts_settled_idx" ON "payouts" USING btree ("environment","settled_at");--> statement-breakpoint
-- hand-written: a payout's status is one the service knows, and a confirmed one names its Pix.
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_status_known" CHECK ("status" IN ('sending', 'pending', 'confirmed', 'failed', 'returned'));--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_amount_positive" CHECK ("amount" > 0);--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_confirmed_has_e2e" CHECK ("status" NOT IN ('confirmed', 'returned') OR "end_to_end_id" IS NOT NULL);
