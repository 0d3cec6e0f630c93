CREATE TABLE "charges" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"loan_id" text NOT NULL,
	"status" text NOT NULL,
	"scope" text NOT NULL,
	"amount" integer NOT NULL,
	"txid" text NOT NULL,
	"br_code" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"paid_at" timestamp (3) with time zone,
	"payment_reference" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "received_pix" (
	"end_to_end_id" text PRIMARY KEY NOT NULL,
	"source" text NOT NULL,
	"status" text NOT NULL,
	"txid" text,
	"amount" integer NOT NULL,
	"paid_at" timestamp (3) with time zone NOT NULL,
	"charge_id" text,
	"loan_id" text,
	"partner_id" text,
	"environment" text,
	"transaction_id" text,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"recorded_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "loan_transactions" ADD COLUMN "refund_amount" integer;--> statement-breakpoint
ALTER TABLE "loans" ADD COLUMN "refund_due_amount" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "charges" ADD CONSTRAINT "charges_loan_id_loans_id_fk" FOREIGN KEY ("loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "received_pix" ADD CONSTRAINT "received_pix_charge_id_charges_id_fk" FOREIGN KEY ("charge_id") REFERENCES "public"."charges"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "received_pix" ADD CONSTRAINT "received_pix_loan_id_loans_id_fk" FOREIGN KEY ("loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "received_pix" ADD CONSTRAINT "received_pix_transaction_id_loan_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."loan_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "charges_txid_idx" ON "charges" USING btree ("txid");--> statement-breakpoint
CREATE UNIQUE INDEX "charges_one_active_idx" ON "charges" USING btree ("loan_id") WHERE "charges"."status" = 'active';--> statement-breakpoint
CREATE INDEX "charges_loan_idx" ON "charges" USING btree ("partner_id","environment","loan_id","created_at","id");--> statement-breakpoint
CREATE INDEX "received_pix_unmatched_idx" ON "received_pix" USING btree ("received_at") WHERE "received_pix"."status" = 'unmatched';--> statement-breakpoint
CREATE INDEX "received_pix_charge_idx" ON "received_pix" USING btree ("charge_id");--> statement-breakpoint
ALTER TABLE "charges" ADD CONSTRAINT "charges_amount_positive" CHECK ("amount" > 0);--> statement-breakpoint
ALTER TABLE "received_pix" ADD CONSTRAINT "received_pix_amount_positive" CHECK ("amount" > 0);--> statement-breakpoint
ALTER TABLE "loans" ADD CONSTRAINT "loans_refund_due_not_negative" CHECK ("refund_due_amount" >= 0);
