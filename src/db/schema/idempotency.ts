import { index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The first response to a creating POST, kept for 24 hours under (scope, key). `scope` names the
 * tenant — `partner:{partner_id}:{environment}` — or `ops` for the ops API. The body is sealed
 * (AES-256-GCM): a replayed credential creation must return the same client secret.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    requestMethod: text('request_method').notNull(),
    requestPath: text('request_path').notNull(),
    state: text('state', { enum: ['running', 'completed'] }).notNull(),
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
