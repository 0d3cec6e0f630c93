import { bigint, bigserial, index, pgTable, text } from 'drizzle-orm/pg-core';
import { entryDirections, ledgerAccounts } from '../../domain/ledger/postings.js';
import { timestampColumn as ts } from './columns.js';
import { loans, loanTransactions } from './loans.js';
import { environments } from './partners.js';

/**
 * The double-entry lines of each loan transaction (contract §13). Append-only: the database
 * refuses an UPDATE or DELETE (trigger `ledger_entries_immutable`) and a transaction whose entries
 * do not sum to zero at commit (deferred trigger `ledger_entries_balanced`); see the migration.
 */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    transactionId: text('transaction_id')
      .notNull()
      .references(() => loanTransactions.id),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    loanId: text('loan_id')
      .notNull()
      .references(() => loans.id),
    account: text('account', { enum: ledgerAccounts }).notNull(),
    direction: text('direction', { enum: entryDirections }).notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    /** The transaction's `occurred_at`: the trial balance of a date sums the entries up to it. */
    occurredAt: ts('occurred_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('ledger_entries_transaction_idx').on(t.transactionId),
    index('ledger_entries_loan_idx').on(t.loanId, t.account),
    index('ledger_entries_account_idx').on(t.environment, t.account, t.occurredAt),
  ],
);
