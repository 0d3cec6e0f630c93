import { bigint, bigserial, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { entryDirections, ledgerAccounts } from '../../domain/ledger/postings.js';
import type { Actor } from '../../domain/operators.js';
import { assignmentTransactions } from './assignments.js';
import { receivedPix } from './charges.js';
import { timestampColumn as ts } from './columns.js';
import { loans, loanTransactions } from './loans.js';
import { environments } from './partners.js';

export const receiptTransactionTypes = ['received', 'returned', 'refund_sent'] as const;
export type ReceiptTransactionType = (typeof receiptTransactionTypes)[number];

/**
 * The ledger's movements of money no loan claims (contract §14, an unmatched Pix): its arrival
 * (`received`: the cash in, owed to nobody yet), and — ops returning it to its payer — the debt
 * back (`returned`) and the money sent (`refund_sent`). Matched to a loan instead, the Pix is
 * booked as a loan transaction that draws on `unidentified_receipts`. One of each per Pix.
 */
export const receiptTransactions = pgTable(
  'receipt_transactions',
  {
    id: text('id').primaryKey(),
    endToEndId: text('end_to_end_id')
      .notNull()
      .references(() => receivedPix.endToEndId),
    environment: text('environment', { enum: environments }).notNull(),
    type: text('type', { enum: receiptTransactionTypes }).notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    /** The devolução that sent it back (ops name it). */
    reference: text('reference'),
    actor: jsonb('actor').$type<Actor>(),
    approvedBy: jsonb('approved_by').$type<Actor>(),
    occurredAt: ts('occurred_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('receipt_transactions_step_idx').on(t.endToEndId, t.type)],
);

/**
 * The double-entry lines of each loan transaction (contract §13), of each receipt transaction
 * (money no loan claims yet) and of each assignment transaction (a sale's money between the
 * lender and its buyer, contract §19): exactly one of the three. Append-only: the database
 * refuses an UPDATE or DELETE (trigger `ledger_entries_immutable`) and a transaction whose entries
 * do not sum to zero at commit (deferred trigger `ledger_entries_balanced`); see the migrations.
 */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    transactionId: text('transaction_id').references(() => loanTransactions.id),
    receiptTransactionId: text('receipt_transaction_id').references(() => receiptTransactions.id),
    /** Contract §19: the buyer's payment of a sale's price, or a day's remittance to the buyer. */
    assignmentTransactionId: text('assignment_transaction_id').references(
      () => assignmentTransactions.id,
    ),
    /** The loan's tenant; null for money no loan claims. */
    partnerId: text('partner_id'),
    environment: text('environment', { enum: environments }).notNull(),
    loanId: text('loan_id').references(() => loans.id),
    account: text('account', { enum: ledgerAccounts }).notNull(),
    direction: text('direction', { enum: entryDirections }).notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    /** The transaction's `occurred_at`: the trial balance of a date sums the entries up to it. */
    occurredAt: ts('occurred_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('ledger_entries_transaction_idx').on(t.transactionId),
    index('ledger_entries_receipt_transaction_idx').on(t.receiptTransactionId),
    index('ledger_entries_assignment_transaction_idx').on(t.assignmentTransactionId),
    index('ledger_entries_loan_idx').on(t.loanId, t.account),
    index('ledger_entries_account_idx').on(t.environment, t.account, t.occurredAt),
  ],
);
