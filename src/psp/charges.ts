/**
 * Production charges at the lender's PSP (contract §16): registered by the charge's activity,
 * removed once cancelled or expired. Removal is never on a loan's critical path: the activity
 * that closes a charge tries once after its commit, and the worker's housekeeping removes whatever
 * is left (`charges.psp_removed_at` null on a closed PSP charge), so a PSP that is down delays a
 * removal and blocks nothing.
 */
import type { DbOrTx } from '../db/client.js';
import { chargesAwaitingPspRemoval, markRemovedAtPsp } from '../db/queries/charges.js';
import type { PspChargeKind } from '../domain/pix/dynamic-charges.js';
import type { Logger } from '../logger.js';
import type { CobRequest, CobVRequest, PspClient } from './client.js';
import { PspError } from './errors.js';

/** Registers the charge (a PUT by txid: a repeat revises it to the same) and answers its BR Code. */
export async function registerCharge(
  psp: PspClient,
  txid: string,
  request: { kind: 'cob'; body: CobRequest } | { kind: 'cobv'; body: CobVRequest },
): Promise<string> {
  const created =
    request.kind === 'cob'
      ? await psp.createCob(txid, request.body)
      : await psp.createCobv(txid, request.body);
  if (!created.pixCopiaECola)
    throw new PspError(
      'invalid_answer',
      `PSP PUT /${request.kind}/${txid} answered no pixCopiaECola`,
    );
  return created.pixCopiaECola;
}

/**
 * What a removal found: `removed` (now, or before: REMOVIDA), `paid` (CONCLUIDA: a Pix paid it
 * before the removal, and is notified as any), `unknown` (the PSP never registered it).
 */
export type Removal = 'removed' | 'paid' | 'unknown';

/**
 * Removes the charge at the PSP (`PATCH` to REMOVIDA_PELO_USUARIO_RECEBEDOR), so it can no
 * longer be paid. The API Pix refuses to change a charge that is not ATIVA: the charge is then
 * read to say why. Throws a `PspError` when the PSP cannot be reached (`retryable`) or answers
 * something else.
 */
export async function removeCharge(
  psp: PspClient,
  kind: PspChargeKind,
  txid: string,
): Promise<Removal> {
  try {
    await psp.cancelCharge(kind, txid);
    return 'removed';
  } catch (error) {
    if (!(error instanceof PspError) || error.retryable) throw error;
    if (error.code === 'not_found') return 'unknown';
    if (error.code !== 'rejected') throw error;
    const current = kind === 'cob' ? await psp.getCob(txid) : await psp.getCobv(txid);
    if (current.status === 'CONCLUIDA') return 'paid';
    if (current.status !== 'ATIVA') return 'removed';
    throw error;
  }
}

/**
 * Removes at the PSP the closed charges it still holds payable (of one loan, of one charge, or
 * any: `limit` of them, oldest first), each marked removed once the PSP says so. Stops when the
 * PSP cannot be reached; a charge it refuses or does not know is logged and skipped, so it holds
 * up no other. The next sweep tries whatever is left again.
 */
export async function removeClosedCharges(
  deps: { db: DbOrTx; psp: PspClient; logger: Logger },
  of: { loanId?: string; chargeId?: string; limit?: number } = {},
): Promise<{ removed: number; failed: boolean }> {
  const waiting = await chargesAwaitingPspRemoval(deps.db, of);
  let removed = 0;
  let failed = false;
  for (const charge of waiting) {
    try {
      const outcome = await removeCharge(deps.psp, charge.pspKind, charge.txid);
      if (outcome === 'unknown') {
        // Registered before its row was written, a charge the PSP does not know is not this
        // account's (another deployment's, sharing the database as test stacks do) or lost
        // there: left for ops to see, never marked removed on a guess.
        deps.logger.warn(
          { chargeId: charge.id, txid: charge.txid },
          'the PSP does not know a closed charge; not marked removed',
        );
        failed = true;
        continue;
      }
      if (outcome === 'paid')
        deps.logger.warn(
          { chargeId: charge.id, txid: charge.txid, status: charge.status },
          'a closed charge was paid at the PSP before its removal; its Pix is booked as any',
        );
      await markRemovedAtPsp(deps.db, charge.id);
      removed += 1;
    } catch (error) {
      deps.logger.warn(
        { err: error, chargeId: charge.id, txid: charge.txid },
        'removing a closed charge at the PSP failed; the worker will try again',
      );
      failed = true;
      // The PSP unreachable: the next sweep tries them all again. A refusal of this one charge
      // holds up no other.
      if (!(error instanceof PspError) || error.retryable) return { removed, failed };
    }
  }
  return { removed, failed };
}
