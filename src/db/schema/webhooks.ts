import { index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { environments } from '../../domain/environments.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/**
 * A partner's webhook endpoint. Secrets are sealed (AES-256-GCM): the service must read them to
 * sign. During a rotation the previous secret signs too, until `previous_secret_expires_at`.
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    url: text('url').notNull(),
    events: jsonb('events').$type<string[]>().notNull(),
    description: text('description'),
    status: text('status', { enum: ['enabled', 'disabled'] }).notNull(),
    disabledReason: text('disabled_reason', { enum: ['manual', 'gone', 'failing'] }),
    secretSealed: text('secret_sealed').notNull(),
    previousSecretSealed: text('previous_secret_sealed'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    /** Events in a row whose delivery ended `failed`; five disable the endpoint. */
    consecutiveFailedEvents: integer('consecutive_failed_events').notNull().default(0),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('webhook_endpoints_tenant_idx').on(t.partnerId, t.environment, t.createdAt, t.id)],
);
