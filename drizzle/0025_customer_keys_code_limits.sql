CREATE TABLE "customer_data_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"customer_id" text NOT NULL,
	"wrapped_key" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"destroyed_at" timestamp (3) with time zone,
	CONSTRAINT "customer_data_keys_customer_id_unique" UNIQUE("customer_id")
);
--> statement-breakpoint
ALTER TABLE "loans" ADD COLUMN "erased_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "verification_codes" ADD COLUMN "decoy" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "verification_codes" ADD COLUMN "requested_ip" text;--> statement-breakpoint
ALTER TABLE "customer_data_keys" ADD CONSTRAINT "customer_data_keys_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- hand-written:
-- A data key is either held (wrapped) or destroyed, never both, never neither.
ALTER TABLE "customer_data_keys" ADD CONSTRAINT "customer_data_keys_held_or_destroyed" CHECK (("wrapped_key" IS NULL) = ("destroyed_at" IS NOT NULL));--> statement-breakpoint
-- A destroyed key stays destroyed (no restore from a copy of its wrapped bytes), and no key row
-- is ever removed (its customer would get a new key, as if never erased).
CREATE FUNCTION "customer_data_keys_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF OLD."destroyed_at" IS NULL THEN
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION 'customer data keys: % refused (a key is destroyed once, and kept destroyed)', TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;--> statement-breakpoint
CREATE TRIGGER "customer_data_keys_destroyed_for_good" BEFORE UPDATE OR DELETE ON "customer_data_keys" FOR EACH ROW EXECUTE FUNCTION "customer_data_keys_refuse_change"();--> statement-breakpoint
CREATE TRIGGER "customer_data_keys_not_truncated" BEFORE TRUNCATE ON "customer_data_keys" FOR EACH STATEMENT EXECUTE FUNCTION "customer_data_keys_refuse_change"();
