import { getExternalWorkflowHandle, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import type { Release } from '../../activities/refinancing.js';
import type { Actors } from '../../src/domain/operators.js';
import type { Tenant } from '../../src/domain/tenant.js';
import { workflowIds } from '../../src/temporal/workflow-ids.js';
import { offerLoanReplacedSignal } from '../credit-offers/messages.js';
import { databaseWrite } from '../presets.js';
import type { Serialized } from '../step-queue.js';
import { finishRefinancedUpdate } from './refinancing-messages.js';

const { releaseLoan, refinancingChanged, finishRefinancedLoans, confirmRefinanced } =
  proxyActivities<Activities>(databaseWrite);

/**
 * Contract §17 in the loan's workflow (behind `patched('refinancing')`; docs/refinancing.md).
 * The new loan's side: its release (`releaseLoan`: a loan that refinances nothing is released as
 * before), then — the old loans paid off in the same database transaction — the offer handed
 * over and each old loan's workflow told (`finishRefinanced`). Answers whether the money was
 * released; a refused release leaves everything as it was, for the caller to cancel the loan.
 */
export async function release(
  input: { tenant: Tenant; loanId: string; customerId: string },
  step: { at: string; transactionId: string; eventId: string } & Actors,
): Promise<Extract<Release, { released: false }> | undefined> {
  const released = await releaseLoan({ tenant: input.tenant, loanId: input.loanId, ...step });
  if (!released.released) return released;
  if (released.offer) {
    const { offerId, fromLoanId } = released.offer;
    try {
      await getExternalWorkflowHandle(workflowIds.creditOffers(input.customerId)).signal(
        offerLoanReplacedSignal,
        { offerId, fromLoanId, toLoanId: input.loanId },
      );
    } catch {
      // An offers workflow that has ended (a denied customer's) has nothing to hear.
    }
  }
  if (released.refinanced.length > 0)
    await finishRefinancedLoans({ newLoanId: input.loanId, refinanced: released.refinanced });
  return undefined;
}

/** Before a production refinancing's payout leaves: why its release would be refused, if so. */
export const payoutRefusal = (tenant: Tenant, loanId: string, at: string) =>
  refinancingChanged({ tenant, loanId, at });

/**
 * The old loan's side: `finishRefinanced` from the new loan's release, checked against the record
 * (one step of the loan's queue; the same new loan again answers as the first time). Answers
 * which loan paid this one off, if one did: its offer then goes on with that loan.
 */
export function answerRefinancedFinish(
  tenant: Tenant,
  loanId: string,
  serialized: Serialized,
  finished: () => void,
): () => string | undefined {
  let paidOffBy: string | undefined;
  setHandler(finishRefinancedUpdate, ({ newLoanId }) =>
    serialized(async () => {
      if (paidOffBy !== newLoanId) {
        await confirmRefinanced({ tenant, loanId, newLoanId });
        paidOffBy = newLoanId;
        finished();
      }
      return { finished: true as const };
    }),
  );
  return () => paidOffBy;
}
