import { doublePrecision, index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampColumn } from './columns.js';
import { environments } from '../../domain/environments.js';

const ts = timestampColumn;

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
    /** Deliveries per second this endpoint is sent; halved on 429/502/504, regained by successes. */
    sendRate: doublePrecision('send_rate').notNull().default(50),
    /** The earliest moment the next attempt to this endpoint may start. */
    nextSendAt: ts('next_send_at').notNull().defaultNow(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('webhook_endpoints_tenant_idx').on(t.partnerId, t.environment, t.createdAt, t.id)],
);

export interface DeliveryAttempt {
  number: number;
  started_at: string;
  response_status: number | null;
  error: string | null;
  duration_ms: number;
}

/**
 * One delivery of one event to one endpoint. The first delivery of an (event, endpoint) pair has
 * an id derived from both, so fanning out twice makes it once; a resend is a new delivery.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    eventId: text('event_id').notNull(),
    endpointId: text('endpoint_id').notNull(),
    status: text('status', { enum: ['pending', 'succeeded', 'failed', 'cancelled'] }).notNull(),
    attempts: jsonb('attempts').$type<DeliveryAttempt[]>().notNull().default([]),
    nextAttemptAt: ts('next_attempt_at'),
    resendOf: text('resend_of'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('webhook_deliveries_endpoint_idx').on(
      t.partnerId,
      t.environment,
      t.endpointId,
      t.createdAt,
      t.id,
    ),
    index('webhook_deliveries_pending_idx').on(t.endpointId, t.status),
  ],
);
