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
    /**
     * Set when the customer was erased (contract §15): the personal fields hold placeholders and
     * `identity_hash` the keyed hash of the identity, so a re-registration is recognized.
     */
    erasedAt: ts('erased_at'),
    identityHash: text('identity_hash'),
    /** The erased customer this one's identity belonged to, when it was registered again. */
    previousCustomerId: text('previous_customer_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    // Identity is the pair (cpf, cnpj) within one partner and environment, among the customers
    // not erased (an erased one keeps a hash of it, in identity_hash).
    uniqueIndex('customers_identity_idx')
      .on(t.partnerId, t.environment, t.cpf, sql`coalesce(${t.cnpj}, '')`)
      .where(sql`${t.erasedAt} is null`),
    index('customers_identity_hash_idx')
      .on(t.partnerId, t.environment, t.identityHash)
      .where(sql`${t.identityHash} is not null`),
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
 * An erasure (contract §15, LGPD art. 18): asked for by an operator, the personal data erased at
 * once, the files and workflows ended by its `customer-erasure/{cust_id}` workflow, and what the
 * law keeps (contracts, ledger) erased by the same workflow at `retained_until`.
 */
export const customerErasures = pgTable('customer_erasures', {
  customerId: text('customer_id')
    .primaryKey()
    .references(() => customers.id),
  partnerId: text('partner_id').notNull(),
  environment: text('environment', { enum: environments }).notNull(),
  requestedBy: jsonb('requested_by').$type<Actor>().notNull(),
  erasedAt: ts('erased_at').notNull(),
  /** On the customer's clock: when the kept contracts are erased too (null: nothing kept). */
  retainedUntil: ts('retained_until'),
  /** When the documents were deleted from the object store and the workflows ended. */
  filesDeletedAt: ts('files_deleted_at'),
  /** When nothing personal was left (the retained records too). */
  completedAt: ts('completed_at'),
});

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
    // The customer an event is about (a customer event's `id`, anything else's `customer_id`):
    // how an erasure finds the payloads to redact.
    // `GET /v3/events?resource_id=`: the events whose payload names a record (containment).
    index('events_data_idx').using('gin', sql`${t.data} jsonb_path_ops`),
    index('events_customer_idx').on(
      t.partnerId,
      t.environment,
      sql`coalesce(${t.data}->>'customer_id', ${t.data}->>'id')`,
    ),
  ],
);
