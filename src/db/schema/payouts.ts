import { sql } from 'drizzle-orm';
import { bigint, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import {
  payoutStatuses,
  type PayoutBeneficiary,
  type PayoutStatus,
} from '../../domain/payouts/payouts.js';
import { timestampColumn as ts } from './columns.js';
import { loans } from './loans.js';
import { environments } from './partners.js';

/**
 * A production loan's disbursement sent through the lender's PSP (contract §16). Stored before
 * the PSP is called (`sending`), with exactly what is sent: `id` (`pyt_…`, drawn by the loan's
 * workflow when the claim is carried out) is the payout's idempotency key at the PSP, so a retry
 * — after a crash, whenever — sends the same request under the same key and the PSP makes one
 * payout. Then the PSP's answers, notified or polled: its id, the outcome, the end-to-end id of
 * the Pix that carried the money, the reason it failed or came back. One per loan.
 */
export const payouts = pgTable(
  'payouts',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    loanId: text('loan_id')
      .notNull()
      .references(() => loans.id),
    /** Centavos: the loan's amount released. */
    amount: bigint('amount', { mode: 'number' }).notNull(),
    beneficiary: jsonb('beneficiary').$type<PayoutBeneficiary>().notNull(),
    status: text('status', { enum: payoutStatuses }).$type<PayoutStatus>().notNull(),
    /** The PSP's id of the payout (`po_…`), once it answered. */
    pspPayoutId: text('psp_payout_id'),
    endToEndId: text('end_to_end_id'),
    failureReason: text('failure_reason'),
    returnReason: text('return_reason'),
    /** When the PSP confirmed or failed it (its `updatedAt`), and when it came back. */
    settledAt: ts('settled_at'),
    returnedAt: ts('returned_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('payouts_loan_idx').on(t.loanId),
    uniqueIndex('payouts_psp_idx')
      .on(t.pspPayoutId)
      .where(sql`${t.pspPayoutId} is not null`),
    // The daily reconciliation reads a day's payouts by when they were settled.
    index('payouts_settled_idx').on(t.environment, t.settledAt),
  ],
);
