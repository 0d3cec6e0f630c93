import { sql } from 'drizzle-orm';
import { bigint, index, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { refinancingStatuses } from '../../domain/loans/refinancing.js';
import { timestampColumn as ts } from './columns.js';
import { loans } from './loans.js';
import { environments } from './partners.js';

/**
 * Which loans a new loan pays off (contract §17), written with the new loan by `POST /v3/loans`:
 * the payoff its contract covers for each, on its release date, and the IOF days the old loan
 * had paid (T, a decimal string). `pending` while the new loan is live (awaiting signatures or
 * processing): the partial unique index keeps one live new loan per old loan, deciding between
 * two requests racing. `released` once the new loan's release paid the old one off; `void` when
 * the new loan ended before it (the old loan as it was).
 */
export const loanRefinancings = pgTable(
  'loan_refinancings',
  {
    loanId: text('loan_id')
      .notNull()
      .references(() => loans.id),
    refinancedLoanId: text('refinanced_loan_id')
      .notNull()
      .references(() => loans.id),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    /** Centavos: the old loan's payoff on `payoff_date`, paid from the new loan's requested amount. */
    payoffAmount: bigint('payoff_amount', { mode: 'number' }).notNull(),
    /** `YYYY-MM-DD`: the new loan's priced release date. */
    payoffDate: text('payoff_date').notNull(),
    /** T_k of the IOF rule (`iofPaidThroughDays`), a decimal string. */
    paidThroughDays: text('paid_through_days').notNull(),
    status: text('status', { enum: refinancingStatuses }).notNull().default('pending'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.loanId, t.refinancedLoanId] }),
    uniqueIndex('loan_refinancings_live_idx')
      .on(t.refinancedLoanId)
      .where(sql`${t.status} = 'pending'`),
    index('loan_refinancings_refinanced_idx').on(t.refinancedLoanId),
  ],
);
