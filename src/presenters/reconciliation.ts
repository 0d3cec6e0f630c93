import type { ReconciliationReport, StoredDiscrepancy } from '../db/queries/reconciliation.js';
import { discrepancyKinds } from '../domain/reconciliation/report.js';

/** The most discrepancies a report lists (`discrepancy_counts` counts them all). */
export const LISTED_DISCREPANCIES = 1_000;

const side = (count: number | null, amount: number | null) =>
  count === null || amount === null ? null : { count, amount };

/** The public shape of a day's reconciliation report (`GET /ops/v1/reconciliation/{date}`). */
export function presentReconciliation(
  report: ReconciliationReport,
  discrepancies: readonly StoredDiscrepancy[],
) {
  const counts = Object.fromEntries(discrepancyKinds.map((kind) => [kind, 0])) as Record<
    (typeof discrepancyKinds)[number],
    number
  >;
  for (const found of discrepancies) counts[found.kind] += 1;
  const payouts = {
    psp: side(report.pspPayoutCount, report.pspPayoutAmount),
    booked: side(report.bookedPayoutCount, report.bookedPayoutAmount),
  };
  return {
    date: report.date,
    status: report.status,
    runs: report.runs,
    requested_at: report.requestedAt.toISOString(),
    completed_at: report.completedAt?.toISOString() ?? null,
    failure: report.failure,
    currency: 'BRL' as const,
    pix: {
      psp: side(report.pspPixCount, report.pspPixAmount),
      booked: side(report.bookedPixCount, report.bookedPixAmount),
    },
    devolucoes: {
      psp: side(report.pspDevolucaoCount, report.pspDevolucaoAmount),
      booked: side(report.bookedDevolucaoCount, report.bookedDevolucaoAmount),
    },
    payouts: payouts.psp === null && payouts.booked === null ? null : payouts,
    clearing: {
      collections_clearing: {
        debits: report.collectionsClearingDebits,
        pix_debits: report.collectionsClearingPixDebits,
        psp_received: report.pspPixAmount,
      },
      disbursement_clearing: { credits: report.disbursementClearingCredits },
    },
    discrepancy_counts: counts,
    discrepancies: discrepancies.slice(0, LISTED_DISCREPANCIES).map((found) => ({
      kind: found.kind,
      end_to_end_id: found.endToEndId,
      reference: found.reference,
      psp_amount: found.pspAmount,
      booked_amount: found.bookedAmount,
      action: found.action,
    })),
    has_more_discrepancies: discrepancies.length > LISTED_DISCREPANCIES,
  };
}
