import { sql } from 'drizzle-orm';
import {
  bigint,
  date,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { Actor } from '../../domain/operators.js';
import { chargeScopes, chargeStatuses } from '../../domain/loans/charges.js';
import { timestampColumn as ts } from './columns.js';
import { loans, loanTransactions } from './loans.js';
import { environments } from './partners.js';

/**
 * A Pix charge of a loan (contract §14): a BR Code for a fixed amount until `expires_at`. Written
 * by the loan's workflow (created, expired, cancelled when replaced) and by the payment that pays
 * it, in that payment's transaction. One `active` charge per loan (`charges_one_active_idx`).
 */
export const charges = pgTable(
  'charges',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    loanId: text('loan_id')
      .notNull()
      .references(() => loans.id),
    status: text('status', { enum: chargeStatuses }).notNull(),
    scope: text('scope', { enum: chargeScopes }).notNull(),
    amount: integer('amount').notNull(),
    /** The BR Code's transaction id (field 62-05): how a Pix finds its charge. */
    txid: text('txid').notNull(),
    brCode: text('br_code').notNull(),
    expiresAt: ts('expires_at').notNull(),
    paidAt: ts('paid_at'),
    /** The end-to-end id of the Pix that paid it (the payment's `reference`). */
    paymentReference: text('payment_reference'),
    /**
     * Where the charge lives at the lender's PSP (contract §16): `cob` or `cobv` for a production
     * charge registered there (its `br_code` the PSP's `pixCopiaECola`), null for a static BR Code
     * the service composed (the sandbox's, and production's without a PSP).
     */
    pspKind: text('psp_kind', { enum: ['cob', 'cobv'] }),
    /**
     * When the PSP confirmed a cancelled or expired charge can no longer be paid there (removed,
     * or found already paid or gone). Null while a closed PSP charge still waits for its removal.
     */
    pspRemovedAt: ts('psp_removed_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('charges_txid_idx').on(t.txid),
    uniqueIndex('charges_one_active_idx')
      .on(t.loanId)
      .where(sql`${t.status} = 'active'`),
    index('charges_loan_idx').on(t.partnerId, t.environment, t.loanId, t.createdAt, t.id),
    // The closed PSP charges the PSP still holds payable: the worker's sweep removes them.
    index('charges_psp_removal_idx')
      .on(t.updatedAt)
      .where(
        sql`${t.pspKind} IS NOT NULL AND ${t.pspRemovedAt} IS NULL AND ${t.status} IN ('cancelled', 'expired')`,
      ),
  ],
);

export const receivedPixSources = ['psp', 'sandbox'] as const;
export const receivedPixStatuses = ['received', 'recorded', 'unmatched', 'returned'] as const;
export type ReceivedPixStatus = (typeof receivedPixStatuses)[number];

/**
 * Every Pix the service was told of (contract §14), stored before the notification is answered
 * and kept for good: `received` until its payment is recorded (`recorded`, with the transaction),
 * or `unmatched` when its `txid` names no charge (ops list those; its money sits in
 * `unidentified_receipts`) until ops match it to a loan (`received`, then `recorded`) or return it
 * to its payer (`returned`). The end-to-end id is the Pix's identity in the payment system: a
 * notification repeated, however often, stores nothing new.
 */
export const receivedPix = pgTable(
  'received_pix',
  {
    endToEndId: text('end_to_end_id').primaryKey(),
    source: text('source', { enum: receivedPixSources }).notNull(),
    status: text('status', { enum: receivedPixStatuses }).notNull(),
    txid: text('txid'),
    /** Centavos: anything the Pix scheme allows (up to R$ 9,999,999,999.99). */
    amount: bigint('amount', { mode: 'number' }).notNull(),
    /** When the payer's bank says the Pix was paid (`horario`). */
    paidAt: ts('paid_at').notNull(),
    chargeId: text('charge_id').references(() => charges.id),
    loanId: text('loan_id').references(() => loans.id),
    partnerId: text('partner_id'),
    environment: text('environment', { enum: environments }),
    transactionId: text('transaction_id').references(() => loanTransactions.id),
    /** Who matched it to its loan by hand, and who approved that (dual control). */
    matchedBy: jsonb('matched_by').$type<Actor>(),
    matchApprovedBy: jsonb('match_approved_by').$type<Actor>(),
    receivedAt: ts('received_at').notNull().defaultNow(),
    recordedAt: ts('recorded_at'),
    /**
     * The daily reconciliation (contract §16) of this date stored it: the PSP listed it and no
     * notification had brought it. Null for a Pix a notification brought.
     */
    reconciliationDate: date('reconciliation_date', { mode: 'string' }),
  },
  (t) => [
    // The reconciliation reads a day's Pix by when they were paid.
    index('received_pix_paid_at_idx').on(t.paidAt),
    index('received_pix_unmatched_idx')
      .on(t.receivedAt)
      .where(sql`${t.status} = 'unmatched'`),
    index('received_pix_charge_idx').on(t.chargeId),
  ],
);
