import {
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

/**
 * The first response to a creating POST, kept for 24 hours under (scope, key). `scope` names the
 * tenant — `partner:{partner_id}:{environment}` — or the operator of an ops request —
 * `ops:{operator id}` (`ops:break_glass` for OPS_TOKEN). The body is sealed
 * (AES-256-GCM): a replayed credential creation must return the same client secret. While the
 * request runs, `claim_id` names the one holding the key and `locked_until` is renewed by its
 * heartbeat: a key whose holder stopped renewing may be claimed again.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    requestMethod: text('request_method').notNull(),
    requestPath: text('request_path').notNull(),
    state: text('state', { enum: ['running', 'completed'] }).notNull(),
    claimId: uuid('claim_id').notNull().defaultRandom(),
    lockedUntil: timestamp('locked_until', { withTimezone: true, precision: 3 }).notNull(),
    responseStatus: integer('response_status'),
    responseHeaders: jsonb('response_headers').$type<Record<string, string>>(),
    responseBody: text('response_body'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.scope, t.key] }),
    index('idempotency_keys_expires_idx').on(t.expiresAt),
  ],
);
