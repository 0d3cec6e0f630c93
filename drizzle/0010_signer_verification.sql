CREATE TABLE "verification_codes" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"purpose" text NOT NULL,
	"subject_id" text NOT NULL,
	"person" text NOT NULL,
	"channel" text NOT NULL,
	"code_hash" text NOT NULL,
	"key_id" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"failed_at" timestamp (3) with time zone,
	"verified_at" timestamp (3) with time zone,
	"verified_ip" text,
	"verified_user_agent" text,
	"session_token_hash" text,
	"session_expires_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "verification_codes_session_token_hash_unique" UNIQUE("session_token_hash")
);
--> statement-breakpoint
ALTER TABLE "loan_signers" ADD COLUMN "signed_channel" text;--> statement-breakpoint
CREATE INDEX "verification_codes_person_idx" ON "verification_codes" USING btree ("purpose","subject_id","person","created_at");