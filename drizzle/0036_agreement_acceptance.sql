ALTER TABLE "loan_agreements" ADD COLUMN "term_key" text;--> statement-breakpoint
ALTER TABLE "loan_agreements" ADD COLUMN "accepted_sha256" text;--> statement-breakpoint
-- hand-written: a term is stored and hashed together, or not at all (agreements made before terms).
ALTER TABLE "loan_agreements" ADD CONSTRAINT "loan_agreements_term_whole" CHECK (("term_key" IS NULL) = ("term_sha256" IS NULL));
