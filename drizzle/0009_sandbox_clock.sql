CREATE TABLE "sandbox_clocks" (
	"customer_id" text PRIMARY KEY NOT NULL,
	"offset_ms" bigint NOT NULL,
	"generation" integer NOT NULL,
	"status" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sandbox_clocks" ADD CONSTRAINT "sandbox_clocks_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;