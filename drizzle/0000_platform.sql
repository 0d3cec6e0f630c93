CREATE TABLE "credentials" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"client_id" text NOT NULL,
	"secret_hash" text NOT NULL,
	"name" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone,
	CONSTRAINT "credentials_client_id_unique" UNIQUE("client_id")
);
--> statement-breakpoint
CREATE TABLE "partners" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "smoke_checks" (
	"id" text PRIMARY KEY NOT NULL,
	"status" text NOT NULL,
	"delay_ms" integer NOT NULL,
	"workflow_id" text NOT NULL,
	"completed_by" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "workflow_outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"workflow_id" text NOT NULL,
	"workflow_type" text NOT NULL,
	"task_queue" text NOT NULL,
	"args" jsonb NOT NULL,
	"search_attributes" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"next_attempt_at" timestamp (3) with time zone NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"started_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "credentials" ADD CONSTRAINT "credentials_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "credentials_partner_env_idx" ON "credentials" USING btree ("partner_id","environment");--> statement-breakpoint
CREATE INDEX "workflow_outbox_due_idx" ON "workflow_outbox" USING btree ("next_attempt_at") WHERE "workflow_outbox"."started_at" is null;