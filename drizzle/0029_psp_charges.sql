ALTER TABLE "charges" ADD COLUMN "psp_kind" text;--> statement-breakpoint
ALTER TABLE "charges" ADD COLUMN "psp_removed_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "charges_psp_removal_idx" ON "charges" USING btree ("updated_at") WHERE "charges"."psp_kind" IS NOT NULL AND "charges"."psp_removed_at" IS NULL AND "charges"."status" IN ('cancelled', 'expired');--> statement-breakpoint
-- hand-written:
-- A charge lives at the PSP as a cob or a cobv, or not at all; only a PSP's charge is removed there.
ALTER TABLE "charges" ADD CONSTRAINT "charges_psp_kind" CHECK ("psp_kind" IN ('cob', 'cobv'));--> statement-breakpoint
ALTER TABLE "charges" ADD CONSTRAINT "charges_psp_removed_of_psp_charge" CHECK ("psp_removed_at" IS NULL OR "psp_kind" IS NOT NULL);
