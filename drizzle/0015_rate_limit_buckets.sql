CREATE TABLE "rate_limit_buckets" (
	"key" text PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"granted" integer NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"full_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
-- Appended by hand (drizzle-kit has no unlogged tables). Every request writes its bucket's row, and
-- nothing in it must outlive a crash: unlogged, its writes skip the WAL (and commit without waiting
-- for a flush), and a crash or a failover leaves it empty, every bucket full.
ALTER TABLE "rate_limit_buckets" SET UNLOGGED;
