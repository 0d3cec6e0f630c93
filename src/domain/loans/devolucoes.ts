/**
 * Money due back leaving by devolução (contract §16): which received Pix a refund returns, and
 * the ids it is known by at the PSP. Pure, so the ops route, the approved command and the refund
 * workflow's activity plan the same way.
 */

/** Where a devolução stands (the API Pix's statuses, and `requested` before the PSP took it). */
export const devolucaoStatuses = ['requested', 'processing', 'returned', 'failed'] as const;
export type DevolucaoStatus = (typeof devolucaoStatuses)[number];
/** Open: its amount is on its way back and counts against what may still be asked for. */
export const openDevolucaoStatuses: readonly DevolucaoStatus[] = ['requested', 'processing'];
export const devolucaoOrigins = ['automatic', 'ops'] as const;
export type DevolucaoOrigin = (typeof devolucaoOrigins)[number];

/** The API Pix's status of a devolução, as ours. */
export const devolucaoStatusOf = (status: string): DevolucaoStatus | undefined =>
  ({ EM_PROCESSAMENTO: 'processing', DEVOLVIDO: 'returned', NAO_REALIZADO: 'failed' })[status] as
    DevolucaoStatus | undefined;

/** A Pix the loan received through the PSP, and what of it has been (or is being) returned. */
export interface ReturnablePix {
  endToEndId: string;
  /** Centavos it brought. */
  amount: number;
  paidAt: Date;
  /** Centavos of its devoluções that did not fail (open or returned). */
  returned: number;
}

/** At most this many Pix in one refund: the devolução id keeps two digits for its position. */
export const MAX_DEVOLUCOES_PER_REFUND = 99;

/**
 * What each Pix gives back to return `amount`: the newest Pix first (the money most recently
 * received is the money that was not owed), each at most what it brought less its earlier
 * devoluções; the next older one for the rest. Answers the parts and what could not be placed
 * (more than the Pix can return: money that came otherwise, or by more than 99 Pix).
 */
export function planDevolucoes(
  amount: number,
  pix: readonly ReturnablePix[],
): { parts: { endToEndId: string; amount: number }[]; unplaced: number } {
  const newestFirst = [...pix].sort(
    (a, b) => b.paidAt.getTime() - a.paidAt.getTime() || (a.endToEndId < b.endToEndId ? 1 : -1),
  );
  const parts: { endToEndId: string; amount: number }[] = [];
  let left = amount;
  for (const each of newestFirst) {
    if (left <= 0 || parts.length === MAX_DEVOLUCOES_PER_REFUND) break;
    const room = each.amount - each.returned;
    if (room <= 0) continue;
    const part = Math.min(room, left);
    parts.push({ endToEndId: each.endToEndId, amount: part });
    left -= part;
  }
  return { parts, unplaced: left };
}

/** What devolução can return at most now: the Pix's room, over at most 99 of them. */
export const returnableAmount = (pix: readonly ReturnablePix[]): number =>
  amountAfter(planDevolucoes(Number.MAX_SAFE_INTEGER, pix));
const amountAfter = (plan: ReturnType<typeof planDevolucoes>) =>
  plan.parts.reduce((sum, part) => sum + part.amount, 0);

const hexOf = (id: string, prefix: string) => {
  const hex = id.slice(prefix.length + 1);
  if (!id.startsWith(`${prefix}_`) || !/^[0-9a-f]{32}$/.test(hex))
    throw new Error(`not a ${prefix} id: ${id}`);
  return hex;
};

/**
 * A refund's id, from what asked for it, so asking twice (a retried activity, a re-driven outbox
 * row, an approval run again) is the same refund: the automatic one of the transaction that made
 * the money due, or the one an approval asked for.
 */
export const refundIdFor = {
  transaction: (transactionId: string) => `rfd_${hexOf(transactionId, 'txn')}`,
  approval: (approvalId: string) => `rfd_${hexOf(approvalId, 'apr')}`,
};

/**
 * The id of the refund's `index`th devolução (0-based): `D`, the refund's 32 hex digits and two
 * digits of position — 35 characters of `[a-zA-Z0-9]`, the most the API Pix allows. Stable across
 * retries, so a PUT repeated after a lost answer names the same devolução.
 */
export function devolucaoId(refundId: string, index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_DEVOLUCOES_PER_REFUND)
    throw new RangeError(`devolução position ${index} out of 0..${MAX_DEVOLUCOES_PER_REFUND - 1}`);
  return `D${hexOf(refundId, 'rfd')}${String(index).padStart(2, '0')}`;
}
