import type { Actor } from '../../domain/operators.js';
import { sql } from 'drizzle-orm';
import { bigserial, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestampColumn } from './columns.js';
import type { CreditAnalysis, CustomerStatus, KycItem } from '../../domain/customers/kyc.js';
import { environments } from './partners.js';

const ts = timestampColumn;

/**
 * A borrower. Written by the API at registration and afterwards only by the customer's onboarding
 * workflow (through its activities), which owns `status` and `kyc`.
 */
export const customers = pgTable(
  'customers',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    status: text('status').$type<CustomerStatus>().notNull(),
    cpf: text('cpf').notNull(),
    cnpj: text('cnpj'),
    name: text('name').notNull(),
    email: text('email').notNull(),
    phone: text('phone').notNull(),
    tradingName: text('trading_name'),
    externalId: text('external_id'),
    kyc: jsonb('kyc').$type<KycItem[]>().notNull(),
    deniedReason: text('denied_reason'),
    creditAnalysis: jsonb('credit_analysis').$type<CreditAnalysis>(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    // Identity is the pair (cpf, cnpj) within one partner and environment.
    uniqueIndex('customers_identity_idx').on(
      t.partnerId,
      t.environment,
      t.cpf,
      sql`coalesce(${t.cnpj}, '')`,
    ),
    index('customers_created_idx').on(t.partnerId, t.environment, t.createdAt, t.id),
    index('customers_updated_idx').on(t.partnerId, t.environment, t.updatedAt, t.id),
    index('customers_name_idx').on(t.partnerId, t.environment, t.name, t.id),
    index('customers_external_id_idx').on(t.partnerId, t.environment, t.externalId),
  ],
);

export const documents = pgTable(
  'documents',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    type: text('type').notNull(),
    status: text('status', { enum: ['submitted', 'approved', 'rejected'] }).notNull(),
    fileName: text('file_name').notNull(),
    contentType: text('content_type').notNull(),
    sizeBytes: integer('size_bytes').notNull(),
    sha256: text('sha256').notNull(),
    storageKey: text('storage_key').notNull(),
    uploadedAt: ts('uploaded_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('documents_customer_idx').on(t.partnerId, t.environment, t.customerId, t.createdAt, t.id),
  ],
);

/** A biometric capture session; the URL carries a token whose SHA-256 is kept here. */
export const biometricSessions = pgTable(
  'biometric_sessions',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    tokenHash: text('token_hash').notNull().unique(),
    status: text('status', { enum: ['open', 'completed', 'expired', 'superseded'] }).notNull(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    completedAt: ts('completed_at'),
  },
  (t) => [index('biometric_sessions_customer_idx').on(t.customerId, t.status)],
);

/**
 * What happened, for partners: written in the same transaction as the change it reports, read by
 * `GET /v3/events`, delivered by the webhooks.
 */
export const events = pgTable(
  'events',
  {
    id: text('id').primaryKey(),
    /** Insertion order: events of one change share a timestamp but keep the order they were written in. */
    seq: bigserial('seq', { mode: 'number' }).notNull().unique(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    type: text('type').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    /** Who caused it, when recorded (contract §15): an ops command's operator, say. */
    actor: jsonb('actor').$type<Actor>(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    index('events_seq_idx').on(t.partnerId, t.environment, t.seq),
    index('events_type_idx').on(t.partnerId, t.environment, t.type, t.seq),
  ],
);
