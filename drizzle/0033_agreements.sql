CREATE TABLE "agreement_simulations" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"loan_id" text NOT NULL,
	"figures" jsonb NOT NULL,
	"valid_until" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "loan_agreements" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"loan_id" text NOT NULL,
	"simulation_id" text NOT NULL,
	"status" text NOT NULL,
	"figures" jsonb NOT NULL,
	"acceptance_deadline" timestamp (3) with time zone NOT NULL,
	"term_sha256" text,
	"accepted_at" timestamp (3) with time zone,
	"accepted_ip" text,
	"accepted_user_agent" text,
	"accepted_channel" text,
	"active_at" timestamp (3) with time zone,
	"ended_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agreement_simulations" ADD CONSTRAINT "agreement_simulations_loan_id_loans_id_fk" FOREIGN KEY ("loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "loan_agreements" ADD CONSTRAINT "loan_agreements_loan_id_loans_id_fk" FOREIGN KEY ("loan_id") REFERENCES "public"."loans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "loan_agreements" ADD CONSTRAINT "loan_agreements_simulation_id_agreement_simulations_id_fk" FOREIGN KEY ("simulation_id") REFERENCES "public"."agreement_simulations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agreement_simulations_loan_idx" ON "agreement_simulations" USING btree ("loan_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "loan_agreements_simulation_idx" ON "loan_agreements" USING btree ("simulation_id");--> statement-breakpoint
CREATE UNIQUE INDEX "loan_agreements_one_live_idx" ON "loan_agreements" USING btree ("loan_id") WHERE "loan_agreements"."status" IN ('pending_acceptance', 'pending_entry', 'active');--> statement-breakpoint
CREATE INDEX "loan_agreements_loan_idx" ON "loan_agreements" USING btree ("partner_id","environment","loan_id","created_at","id");--> statement-breakpoint
-- hand-written: an agreement's status is one the service knows, and an accepted one says when.
ALTER TABLE "loan_agreements" ADD CONSTRAINT "loan_agreements_status_known" CHECK ("status" IN ('pending_acceptance', 'pending_entry', 'active', 'fulfilled', 'lapsed', 'broken'));--> statement-breakpoint
ALTER TABLE "loan_agreements" ADD CONSTRAINT "loan_agreements_accepted_at" CHECK ("status" IN ('pending_acceptance', 'lapsed') OR "accepted_at" IS NOT NULL);
