import { bigint, bigserial, date, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import {
  discrepancyActions,
  discrepancyKinds,
  reconciliationStatuses,
} from '../../domain/reconciliation/report.js';
import { timestampColumn as ts } from './columns.js';

/**
 * The daily reconciliation's report of one business date (contract §16): what the PSP says the
 * lender's account received and sent that day beside what the service booked, per side (Pix
 * received, devolucoes, payouts), and the clearing accounts' movement for the day. One row per
 * date, rewritten by each run of the date (a rerun replaces the figures and the discrepancies,
 * and books nothing twice). `running` from the request until the run writes its figures.
 *
 * Payouts: `psp_payout_*` and `booked_payout_*` stay null until the payouts side is wired (see
 * `src/reconciliation/sides.ts`).
 */
export const reconciliationReports = pgTable('reconciliation_reports', {
  /** The business date reconciled (São Paulo). */
  date: date('date', { mode: 'string' }).primaryKey(),
  status: text('status', { enum: reconciliationStatuses }).notNull(),
  /** Runs requested for the date (the schedule's and ops'); names each run's workflow. */
  runs: integer('runs').notNull().default(0),
  requestedAt: ts('requested_at').notNull().defaultNow(),
  completedAt: ts('completed_at'),
  /** Why the last run failed (the PSP's refusal), when `failed`. */
  failure: text('failure'),
  pspPixCount: integer('psp_pix_count'),
  pspPixAmount: bigint('psp_pix_amount', { mode: 'number' }),
  bookedPixCount: integer('booked_pix_count'),
  bookedPixAmount: bigint('booked_pix_amount', { mode: 'number' }),
  pspDevolucaoCount: integer('psp_devolucao_count'),
  pspDevolucaoAmount: bigint('psp_devolucao_amount', { mode: 'number' }),
  bookedDevolucaoCount: integer('booked_devolucao_count'),
  bookedDevolucaoAmount: bigint('booked_devolucao_amount', { mode: 'number' }),
  pspPayoutCount: integer('psp_payout_count'),
  pspPayoutAmount: bigint('psp_payout_amount', { mode: 'number' }),
  bookedPayoutCount: integer('booked_payout_count'),
  bookedPayoutAmount: bigint('booked_payout_amount', { mode: 'number' }),
  /** `collections_clearing` debits of the day (production), and the part posted for PSP Pix. */
  collectionsClearingDebits: bigint('collections_clearing_debits', { mode: 'number' }),
  collectionsClearingPixDebits: bigint('collections_clearing_pix_debits', { mode: 'number' }),
  /** `disbursement_clearing` credits of the day (production): disbursements and refunds sent. */
  disbursementClearingCredits: bigint('disbursement_clearing_credits', { mode: 'number' }),
});

/**
 * Each discrepancy a run of a date found: its kind, the Pix (end-to-end id) or devolucao/payout
 * (`reference`) concerned, both sides' amounts (null where a side has none), and what the run did
 * (`booked_missing_notification`) or `none` (left for ops). Replaced with the report's figures.
 */
export const reconciliationDiscrepancies = pgTable(
  'reconciliation_discrepancies',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    date: date('date', { mode: 'string' })
      .notNull()
      .references(() => reconciliationReports.date),
    kind: text('kind', { enum: discrepancyKinds }).notNull(),
    endToEndId: text('end_to_end_id'),
    reference: text('reference'),
    pspAmount: bigint('psp_amount', { mode: 'number' }),
    bookedAmount: bigint('booked_amount', { mode: 'number' }),
    action: text('action', { enum: discrepancyActions }).notNull(),
  },
  (t) => [index('reconciliation_discrepancies_date_idx').on(t.date, t.kind)],
);
