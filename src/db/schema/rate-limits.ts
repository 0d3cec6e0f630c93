import { doublePrecision, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Token buckets every API process shares (src/limits/shared-token-buckets.ts): the partner rate
 * limit per credential and the failed token exchanges per (client_id, address). One row per key,
 * written by one statement per decision against the database's clock. Unlogged (migration 0015):
 * a crash empties it, which leaves every bucket full, as a missing row reads. The worker drops
 * rows that have been full for a while.
 */
export const rateLimitBuckets = pgTable('rate_limit_buckets', {
  /** `{limit}:{caller}`: `request:{credential id}`, `token-failure:{client_id} {address}`. */
  key: text('key').primaryKey(),
  /** Tokens left when the row was last written (fractional: refill is continuous). */
  tokens: doublePrecision('tokens').notNull(),
  /** Tokens the last statement granted, which its RETURNING reads back: 0 when it refused. */
  granted: integer('granted').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  /** When the bucket is full again (a row past it reads as no row): what the purge looks at. */
  fullAt: timestamp('full_at', { withTimezone: true }).notNull(),
});
