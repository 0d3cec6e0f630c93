import { compareSides, type Discrepancy, type SideItem, type SideTotal } from './report.js';

/** A Pix the service holds for the day (`storedPixOfDay`), as the comparison reads it. */
export interface StoredPix extends SideItem {
  reconciliationDate: string | null;
  clearingDebit: number | null;
}

const none = 'none' as const;

/**
 * The Pix side of a day's report, once the run has stored what the notifications missed:
 *
 * - a Pix the reconciliation of `date` stored is `missing_notification`, booked by the run (and
 *   stays so on every rerun: the stored row says who stored it);
 * - one the PSP lists and the service still lacks is `missing_notification` with no action (its
 *   storing failed; the next run takes it);
 * - one the service holds and the PSP does not list is `unknown_to_psp`;
 * - the same end-to-end id with two amounts is `amount_mismatch`;
 * - one held with no `collections_clearing` entry is `not_booked` (its booking is late).
 */
export function pixDiscrepancies(
  date: string,
  psp: readonly SideItem[],
  stored: readonly StoredPix[],
): Discrepancy[] {
  const { onlyPsp, onlyBooked, differing } = compareSides(psp, stored);
  const pspAmount = new Map(psp.map((pix) => [pix.id, pix.amount]));
  const found: Discrepancy[] = [];
  const pix = (
    kind: Discrepancy['kind'],
    id: string,
    amounts: { psp: number | null; booked: number | null },
    action: Discrepancy['action'] = none,
  ): Discrepancy => ({
    kind,
    endToEndId: id,
    reference: null,
    pspAmount: amounts.psp,
    bookedAmount: amounts.booked,
    action,
  });
  for (const row of stored)
    if (row.reconciliationDate === date)
      found.push(
        pix(
          'missing_notification',
          row.id,
          { psp: pspAmount.get(row.id) ?? null, booked: row.amount },
          'booked_missing_notification',
        ),
      );
  for (const item of onlyPsp)
    found.push(pix('missing_notification', item.id, { psp: item.amount, booked: null }));
  for (const row of onlyBooked)
    found.push(pix('unknown_to_psp', row.id, { psp: null, booked: row.amount }));
  for (const { psp: theirs, booked } of differing)
    found.push(pix('amount_mismatch', theirs.id, { psp: theirs.amount, booked: booked.amount }));
  for (const row of stored)
    if (row.clearingDebit === null)
      found.push(pix('not_booked', row.id, { psp: pspAmount.get(row.id) ?? null, booked: null }));
  return found;
}

/** Devolucoes or payouts: present on one side only, or with two amounts. */
export function movementDiscrepancies(
  kinds: {
    notBooked: Discrepancy['kind'];
    unknownToPsp: Discrepancy['kind'];
    amountMismatch: Discrepancy['kind'];
  },
  psp: readonly (SideItem & { endToEndId?: string })[],
  booked: readonly (SideItem & { endToEndId?: string })[],
): Discrepancy[] {
  const { onlyPsp, onlyBooked, differing } = compareSides(psp, booked);
  const of = (
    kind: Discrepancy['kind'],
    item: SideItem & { endToEndId?: string },
    pspAmount: number | null,
    bookedAmount: number | null,
  ): Discrepancy => ({
    kind,
    endToEndId: item.endToEndId ?? null,
    reference: item.id,
    pspAmount,
    bookedAmount,
    action: none,
  });
  return [
    ...onlyPsp.map((item) => of(kinds.notBooked, item, item.amount, null)),
    ...onlyBooked.map((item) => of(kinds.unknownToPsp, item, null, item.amount)),
    ...differing.map(({ psp: theirs, booked: ours }) =>
      of(kinds.amountMismatch, theirs, theirs.amount, ours.amount),
    ),
  ];
}

/**
 * "Clearing accounts match the PSP's totals for the day": the `collections_clearing` debits
 * posted within the day for the PSP's Pix against what the PSP received.
 */
export function clearingDiscrepancies(
  pspReceived: SideTotal,
  collectionsClearingPixDebits: number,
): Discrepancy[] {
  return collectionsClearingPixDebits === pspReceived.amount
    ? []
    : [
        {
          kind: 'clearing_mismatch',
          endToEndId: null,
          reference: 'collections_clearing',
          pspAmount: pspReceived.amount,
          bookedAmount: collectionsClearingPixDebits,
          action: none,
        },
      ];
}
