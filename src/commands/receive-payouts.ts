/**
 * The PSP tells of payouts' outcomes (contract §16, `POST /psp/v1/payouts`): each is recorded on
 * the payout it names by its idempotency key (our `pyt_…` id) in its own transaction, then the
 * loan's workflow is signalled to act on it. A repeated notification records nothing new and
 * signals again, harmlessly — so a crash between the record and the signal is mended by the PSP's
 * retry (the workflow also asks the PSP itself when no notification comes).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import { recordPayoutOutcome } from '../db/queries/payouts.js';
import type { PayoutOutcome } from '../domain/payouts/payouts.js';
import type { Logger } from '../logger.js';
import { workflowIds } from '../temporal/workflow-ids.js';
import { payoutOutcomeSignal } from '../../workflows/loan/messages.js';

export interface ReceivePayoutsDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
}

/** A payout's outcome as the PSP notifies it: our payout's id is its idempotency key. */
export type NotifiedPayout = PayoutOutcome & { idempotencyKey: string };

export interface PayoutsReceipt {
  /** Outcomes this notification recorded. */
  recorded: number;
  /** Outcomes recorded before (or older than what is recorded): nothing changed. */
  unchanged: number;
  /** Payouts the service never sent: logged for ops, nothing changed. */
  unknown: number;
}

export async function receivePayoutOutcomes(
  deps: ReceivePayoutsDeps,
  notified: readonly NotifiedPayout[],
): Promise<PayoutsReceipt> {
  const receipt: PayoutsReceipt = { recorded: 0, unchanged: 0, unknown: 0 };
  for (const { idempotencyKey, ...outcome } of notified) {
    const recorded = await deps.db.transaction((tx) =>
      recordPayoutOutcome(tx, idempotencyKey, outcome),
    );
    if (!recorded) {
      receipt.unknown += 1;
      deps.logger.error(
        { idempotencyKey, pspPayoutId: outcome.pspPayoutId, status: outcome.status },
        'the PSP notified a payout the service never sent',
      );
      continue;
    }
    receipt[recorded.changed ? 'recorded' : 'unchanged'] += 1;
    const { payout } = recorded;
    if (payout.status === 'sending' || payout.status === 'pending') continue;
    try {
      await deps.temporal.workflow
        .getHandle(workflowIds.loan(payout.loanId))
        .signal(payoutOutcomeSignal, { payoutId: payout.id, status: payout.status });
    } catch (error) {
      // The loan's workflow has ended (a payout returned after the loan finished): the record
      // says what happened; ops see the payout on the loan.
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      deps.logger.error(
        { loanId: payout.loanId, payoutId: payout.id, status: payout.status },
        'a payout outcome for a loan whose workflow has ended: left for ops',
      );
    }
  }
  return receipt;
}
