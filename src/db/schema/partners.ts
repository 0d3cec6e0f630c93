import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { environments } from '../../domain/environments.js';

export { environments, type Environment } from '../../domain/environments.js';

export const partners = pgTable('partners', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});

/** An API credential: one client_id/secret pair, bound to one environment. Secrets are stored hashed. */
export const credentials = pgTable(
  'credentials',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id')
      .notNull()
      .references(() => partners.id),
    environment: text('environment', { enum: environments }).notNull(),
    clientId: text('client_id').notNull().unique(),
    secretHash: text('secret_hash').notNull(),
    name: text('name'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, precision: 3 }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [index('credentials_partner_env_idx').on(t.partnerId, t.environment)],
);
