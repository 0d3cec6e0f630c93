/**
 * The daily reconciliation's vocabulary (contract §16): what a report's status, a discrepancy's
 * kind and the action a run took can be. Pure: the table, the presenter, the metrics and the
 * comparison all read these lists.
 */

/**
 * `running` until a run writes its figures; then `matched`, or `discrepancies` left for ops;
 * `failed` when the PSP refused the run's requests (the reason is on the report).
 */
export const reconciliationStatuses = ['running', 'matched', 'discrepancies', 'failed'] as const;
export type ReconciliationStatus = (typeof reconciliationStatuses)[number];

export const discrepancyKinds = [
  /** The PSP received a Pix no notification brought: the run stored and booked it. */
  'missing_notification',
  /** A Pix the service stored (and booked) for the day that the PSP does not list. */
  'unknown_to_psp',
  /** The same end-to-end id with another amount on each side. */
  'amount_mismatch',
  /** A Pix stored with no `collections_clearing` entry yet: its booking has not happened. */
  'not_booked',
  /** A devolucao the PSP settled (DEVOLVIDO) that no refund booked. */
  'devolucao_not_booked',
  /** A refund booked as a devolucao that the PSP does not list as settled. */
  'devolucao_unknown_to_psp',
  'devolucao_amount_mismatch',
  /** Payouts (wired once the payouts table exists: see src/reconciliation/sides.ts). */
  'payout_not_booked',
  'payout_unknown_to_psp',
  'payout_amount_mismatch',
  /** The day's `collections_clearing` debits for PSP Pix differ from the PSP's received total. */
  'clearing_mismatch',
] as const;
export type DiscrepancyKind = (typeof discrepancyKinds)[number];

/** What the run did about a discrepancy: booked it (a dropped notification), or nothing (ops). */
export const discrepancyActions = ['booked_missing_notification', 'none'] as const;
export type DiscrepancyAction = (typeof discrepancyActions)[number];

export interface Discrepancy {
  kind: DiscrepancyKind;
  endToEndId: string | null;
  /** A devolucao's or payout's id; `collections_clearing` for a clearing mismatch. */
  reference: string | null;
  /** Centavos; null where that side has nothing. */
  pspAmount: number | null;
  bookedAmount: number | null;
  action: DiscrepancyAction;
}

/** Count and centavos of one side. */
export interface SideTotal {
  count: number;
  amount: number;
}

export const totalOf = (items: readonly { amount: number }[]): SideTotal => ({
  count: items.length,
  amount: items.reduce((sum, item) => sum + item.amount, 0),
});

/** One item of a side, named by its id on both sides (an end-to-end id, a devolucao's id). */
export interface SideItem {
  id: string;
  amount: number;
}

/**
 * Both sides of one kind of movement, by id: what only the PSP has, what only the service has,
 * and what both have with different amounts. Linear in both (100,000 Pix a day).
 */
export function compareSides<P extends SideItem, B extends SideItem>(
  psp: readonly P[],
  booked: readonly B[],
): { onlyPsp: P[]; onlyBooked: B[]; differing: { psp: P; booked: B }[] } {
  const byId = new Map(booked.map((item) => [item.id, item]));
  const onlyPsp: P[] = [];
  const differing: { psp: P; booked: B }[] = [];
  const seen = new Set<string>();
  for (const item of psp) {
    seen.add(item.id);
    const other = byId.get(item.id);
    if (!other) onlyPsp.push(item);
    else if (other.amount !== item.amount) differing.push({ psp: item, booked: other });
  }
  return { onlyPsp, onlyBooked: booked.filter((item) => !seen.has(item.id)), differing };
}

/** The report's status: `matched` when every discrepancy was acted on, else `discrepancies`. */
export const statusOf = (discrepancies: readonly Discrepancy[]): ReconciliationStatus =>
  discrepancies.some((d) => d.action === 'none') ? 'discrepancies' : 'matched';
