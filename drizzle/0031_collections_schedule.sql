CREATE TABLE "collection_schedules" (
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"steps" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "collection_schedules_partner_id_environment_pk" PRIMARY KEY("partner_id","environment")
);
--> statement-breakpoint
CREATE TABLE "reminder_opt_outs" (
	"customer_id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reminders_sent" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"loan_id" text NOT NULL,
	"installment_number" integer NOT NULL,
	"offset_days" integer NOT NULL,
	"channel" text NOT NULL,
	"step_date" text NOT NULL,
	"amount_due" integer NOT NULL,
	"charge_id" text,
	"event_id" text,
	"emailed_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "reminder_opt_outs" ADD CONSTRAINT "reminder_opt_outs_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reminders_sent" ADD CONSTRAINT "reminders_sent_loan_id_loans_id_fk" FOREIGN KEY ("loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "reminders_sent_once_idx" ON "reminders_sent" USING btree ("loan_id","installment_number","offset_days","channel");--> statement-breakpoint
-- hand-written:
-- A step's channel and a schedule's environment are ones the service knows; a step's offset is in −10…90.
ALTER TABLE "reminders_sent" ADD CONSTRAINT "reminders_sent_channel" CHECK ("channel" IN ('email', 'webhook'));--> statement-breakpoint
ALTER TABLE "reminders_sent" ADD CONSTRAINT "reminders_sent_offset" CHECK ("offset_days" BETWEEN -10 AND 90);--> statement-breakpoint
ALTER TABLE "collection_schedules" ADD CONSTRAINT "collection_schedules_environment" CHECK ("environment" IN ('sandbox', 'production'));--> statement-breakpoint
-- Loans active before reminders existed get their reminders workflow through the outbox (read when the worker's sweeper runs).
INSERT INTO "workflow_outbox" ("workflow_id", "workflow_type", "task_queue", "args", "search_attributes", "summary", "next_attempt_at")
SELECT 'reminders/' || l."id", 'remindersWorkflow', o."task_queue",
       jsonb_build_array(jsonb_build_object('loanId', l."id", 'customerId', l."customer_id", 'partnerId', l."partner_id", 'environment', l."environment")),
       jsonb_build_object('PartnerId', l."partner_id", 'Environment', l."environment", 'CustomerId', l."customer_id", 'LoanId', l."id"),
       'Reminders of loan ' || l."id", now()
FROM "loans" l
JOIN "workflow_outbox" o ON o."workflow_id" = 'loan/' || l."id"
WHERE l."status" = 'active';
