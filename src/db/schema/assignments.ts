import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  date,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import {
  assignmentStatuses,
  assignmentTransactionTypes,
} from '../../domain/assignments/assignments.js';
import type { Actor } from '../../domain/operators.js';
import type { SoldRow } from '../../domain/assignments/pricing.js';
import { timestampColumn as ts } from './columns.js';
import { loans } from './loans.js';

/**
 * A batch of production loans sold to one buyer (cessão, contract §19; docs/assignments.md):
 * `draft` while ops assemble it, `submitted` once priced and frozen, `settled` when another
 * operator approved its settlement on the settlement date (dual control), or `cancelled`.
 */
export const assignments = pgTable(
  'assignments',
  {
    id: text('id').primaryKey(),
    /** Production only (docs/assignments.md): the column keeps the rule visible and checked. */
    environment: text('environment', { enum: ['production'] }).notNull(),
    assigneeName: text('assignee_name').notNull(),
    /** 14 characters, uppercase, check digits verified. */
    assigneeCnpj: text('assignee_cnpj').notNull(),
    /** The monthly discount rate, decimal text (e.g. '0.015'). */
    discountRateMonthly: text('discount_rate_monthly').notNull(),
    settlementDate: date('settlement_date', { mode: 'string' }).notNull(),
    status: text('status', { enum: assignmentStatuses }).notNull(),
    /** Σ the loans' prices (centavos): set when submitted. */
    price: bigint('price', { mode: 'number' }),
    createdBy: text('created_by').notNull(),
    submittedBy: text('submitted_by'),
    /** The approval that settled it (kind `assignment`). */
    approvalId: text('approval_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    submittedAt: ts('submitted_at'),
    settledAt: ts('settled_at'),
    cancelledAt: ts('cancelled_at'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('assignments_created_idx').on(t.createdAt, t.id)],
);

/**
 * A loan in a batch: its rows sold and its price (set when the batch is submitted), and, once
 * settled, what the ledger derecognized. `live` until the batch is cancelled: a loan is in one
 * live batch at most (the partial unique index), and a settled batch stays live for good.
 */
export const assignmentLoans = pgTable(
  'assignment_loans',
  {
    assignmentId: text('assignment_id')
      .notNull()
      .references(() => assignments.id),
    loanId: text('loan_id')
      .notNull()
      .references(() => loans.id),
    partnerId: text('partner_id').notNull(),
    live: boolean('live').notNull().default(true),
    /** The unpaid rows and their present values on the settlement date (when submitted). */
    rows: jsonb('rows').$type<SoldRow[]>(),
    price: bigint('price', { mode: 'number' }),
    /** What settlement took off the lender's book: principal, and interest and charges accrued. */
    carrying: jsonb('carrying').$type<{
      principal: number;
      interest: number;
      late_fee: number;
      late_interest: number;
    }>(),
  },
  (t) => [
    primaryKey({ columns: [t.assignmentId, t.loanId] }),
    uniqueIndex('assignment_loans_live_idx')
      .on(t.loanId)
      .where(sql`${t.live}`),
  ],
);

/**
 * The money of a settled sale between the lender and its buyer (docs/assignments.md, "The money
 * of the sale"): the buyer's payment of the price (`price_received`, one per batch) and each day's
 * remittance of what servicing collected for the buyer (`remitted`, one per batch and day). Their
 * ledger entries name them (`ledger_entries.assignment_transaction_id`); append-only, as the
 * entries are (the migration's triggers).
 */
export const assignmentTransactions = pgTable(
  'assignment_transactions',
  {
    id: text('id').primaryKey(),
    assignmentId: text('assignment_id')
      .notNull()
      .references(() => assignments.id),
    type: text('type', { enum: assignmentTransactionTypes }).notNull(),
    /** The day (São Paulo) whose remittance it pays; null for the price. */
    remittanceDate: date('remittance_date', { mode: 'string' }),
    /** Centavos, positive. */
    amount: bigint('amount', { mode: 'number' }).notNull(),
    /** The bank's identity of the transfer, as ops give it. */
    reference: text('reference').notNull(),
    actor: jsonb('actor').$type<Actor>().notNull(),
    /** When the money moved: the price as ops say it arrived; a remittance when recorded. */
    paidAt: ts('paid_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('assignment_transactions_price_idx')
      .on(t.assignmentId)
      .where(sql`${t.type} = 'price_received'`),
    uniqueIndex('assignment_transactions_remittance_idx')
      .on(t.assignmentId, t.remittanceDate)
      .where(sql`${t.type} = 'remitted'`),
  ],
);
