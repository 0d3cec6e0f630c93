import {
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import type { CreditOfferStatus } from '../../src/domain/credit/offers.js';
import { formatBrl } from '../../src/domain/money.js';
import { customerClock } from '../clock.js';
import { historyFull } from '../history.js';
import { hexId } from '../ids.js';
import { databaseWrite } from '../presets.js';
import { stepQueue } from '../step-queue.js';
import {
  currentOfferQuery,
  customerDeniedSignal,
  loanFinishedSignal,
  offerLoanReplacedSignal,
  offerAcceptedSignal,
  releaseOfferSignal,
  type CreditOffersInput,
  type CreditOffersOutcome,
  type LiveOffer,
} from './messages.js';

const { issueOffer, recordOfferMove, recordOfferSpent } =
  proxyActivities<Activities>(databaseWrite);

/**
 * One per customer (`credit-offers/{cust_id}`), started when the customer becomes active. The only
 * owner of the customer's offers: it issues an offer, holds it through its life — expiry at
 * `valid_until` is a durable timer, a loan's end a signal — and after an
 * expiry or a repaid loan waits `OFFER_RENEWAL_DELAY` and continues as new to issue the next one.
 * Each run owns one offer, so the history stays small however long the customer stays. The one
 * move it does not write is the acceptance: `POST /v3/loans` writes it with the loan, in one
 * transaction, and the loan's workflow then tells this one (`offerAccepted`).
 */
export async function creditOffersWorkflow(input: CreditOffersInput): Promise<CreditOffersOutcome> {
  const tenant = { partnerId: input.partnerId, environment: input.environment };
  let offer: LiveOffer | null = input.carried ?? null;
  let denied = false;
  let released = false;
  let loanFinished = false;
  /** When the offer's life ended (expired or spent), on the customer's clock. */
  let endedAt: number | undefined;
  const clock = customerClock(input.customerId, input.clock);
  /** Ends the run: the clock hears this workflow is done with what was due. */
  const finish = async <T>(outcome: T): Promise<T> => {
    await condition(allHandlersFinished);
    await clock.settled();
    return outcome;
  };

  // Runs started before this release wait out a loan's life in one history, and act only on the
  // loan's messages; newer ones bound every wait and also read the loan's end off the records.
  const bounded = patched('offer-waits-bounded');
  const fromRecords = patched('offer-moves-from-records');
  const mustContinue = () => bounded && historyFull(input.historyLimit);

  // Moves run one at a time, so the timer and a release never both act on one offer.
  const serialized = stepQueue();

  /**
   * Asks for a move from the offer's current state. The database answers where the offer stands:
   * a loan's transaction may have accepted it first (under the same row lock), and then the offer
   * is accepted, whatever this run had heard so far.
   */
  const move = async (live: LiveOffer, status: CreditOfferStatus, loanId = live.loanId) => {
    // Runs recorded before moves were conditional got no answer (`undefined`): the move was made.
    const stored = (await recordOfferMove({
      tenant,
      offerId: live.id,
      from: { status: live.status, loanId: live.loanId },
      status,
      loanId,
      eventId: hexId('evt'),
    })) ?? { status, loanId };
    offer = { ...live, status: stored.status, loanId: stored.loanId };
    // Accepted by a loan that has already ended: its message to this workflow was lost.
    if (fromRecords && stored.status === 'accepted') {
      if (stored.loanEnded === 'released') released = true;
      if (stored.loanEnded === 'finished') loanFinished = true;
    }
    showDetails();
  };

  /**
   * A loan's end names an offer this run still holds as `available`: the loan's acceptance never
   * reached it (the loan's transaction wrote it in the records all the same). The offer is taken
   * as accepted by that loan, and the records decide the move.
   */
  const acceptedUnheard = (offerId: string, loanId: string) => {
    if (!fromRecords || offer?.id !== offerId || offer.status !== 'available') return false;
    offer = { ...offer, status: 'accepted', loanId };
    return true;
  };

  setHandler(offerAcceptedSignal, ({ offerId, loanId }) => {
    if (offer?.id === offerId && offer.status === 'available') {
      offer = { ...offer, status: 'accepted', loanId };
      showDetails();
    }
  });
  setHandler(releaseOfferSignal, ({ offerId, loanId }) => {
    if (acceptedUnheard(offerId, loanId)) released = true;
    else if (offer?.id === offerId && offer.loanId === loanId && offer.status === 'accepted')
      released = true;
  });
  setHandler(loanFinishedSignal, ({ offerId, loanId }) => {
    if (acceptedUnheard(offerId, loanId)) loanFinished = true;
    else if (offer?.id === offerId && offer.loanId === loanId && offer.status === 'accepted')
      loanFinished = true;
  });
  setHandler(offerLoanReplacedSignal, ({ offerId, fromLoanId, toLoanId }) => {
    if (offer?.id === offerId && offer.status === 'accepted' && offer.loanId === fromLoanId) {
      offer = { ...offer, loanId: toLoanId };
      showDetails();
    }
  });
  setHandler(customerDeniedSignal, (denial?: { customerId: string }) => {
    // Runs that took a bare signal before this release replay it as they ran.
    if (patched('signals-carry-their-payload') && denial?.customerId !== input.customerId) return;
    denied = true;
  });
  setHandler(currentOfferQuery, () => offer);

  /** What ops see for this workflow in the Temporal UI. */
  function showDetails(): void {
    // One line, so the UI's details box shows it whole; it names the customer, which a run after
    // a continue-as-new has no static summary to say.
    setCurrentDetails(
      [
        `**Customer:** ${input.customerId}`,
        ...(offer
          ? [
              `**Offer:** ${offer.id} · **Status:** ${offer.status}`,
              `**Approved amount:** ${formatBrl(offer.approvedAmount)}`,
              `**Valid until:** ${new Date(offer.validUntil).toISOString()}`,
              ...(offer.loanId ? [`**Loan:** ${offer.loanId}`] : []),
            ]
          : [`no offer yet${denied ? ' (customer denied)' : ''}`]),
      ].join(' · '),
    );
  }

  if (!offer) {
    const offerId = hexId('co');
    const issued = await issueOffer({
      tenant,
      customerId: input.customerId,
      offerId,
      eventId: hexId('evt'),
      validityMs: input.offerValidityMs,
      // On a moved clock the offer is dated by it; otherwise the activity's now is the same time.
      ...(input.issueAt !== undefined
        ? { at: input.issueAt }
        : clock.state().offsetMs > 0
          ? { at: clock.now() }
          : {}),
    });
    if (!issued) {
      showDetails();
      return finish('not_eligible');
    }
    offer = { id: offerId, status: 'available', loanId: null, ...issued };
  }
  showDetails();

  for (;;) {
    const current: LiveOffer = offer;
    // Continue as new only with nothing pending: a signal's flag does not cross into the next run.
    const pending = () => denied || released || loanFinished;
    if (
      (bounded ? historyFull(input.historyLimit) : workflowInfo().continueAsNewSuggested) &&
      (current.status === 'available' || current.status === 'accepted') &&
      !pending()
    ) {
      await condition(allHandlersFinished);
      if (!pending())
        return continueAsNew<typeof creditOffersWorkflow>({
          ...input,
          carried: offer,
          clock: clock.state(),
        });
    }
    if (current.status === 'available') {
      await clock.until(
        current.validUntil,
        () => denied || offer?.status !== 'available' || mustContinue(),
      );
      await serialized(async () => {
        if (offer?.status !== 'available') return; // accepted meanwhile
        if (denied) await move(offer, 'cancelled');
        else if (clock.now() >= offer.validUntil) {
          await move(offer, 'expired');
          endedAt = offer.validUntil; // the deadline that fell due, however late it was seen
        }
      });
    } else if (current.status === 'accepted') {
      await clock.until(null, () => released || loanFinished || mustContinue());
      if (!released && !loanFinished) continue; // a full history: continue as new first
      if (loanFinished) {
        await serialized(() => recordOfferSpent({ tenant, offerId: current.id }));
        break;
      }
      released = false;
      await serialized(async () => {
        if (denied) await move(current, 'cancelled', current.loanId);
        else if (clock.now() < current.validUntil) await move(current, 'available', null);
        else {
          await move(current, 'expired');
          endedAt = clock.now();
        }
      });
    } else if (current.status === 'cancelled') {
      return finish('customer_denied');
    } else {
      break; // expired
    }
  }

  // Expired or spent: the next offer follows after the renewal delay, in a fresh run. The delay
  // runs from when the offer ended (an expiry seen late on an advanced clock ended at its deadline).
  const renewAt = (endedAt ?? clock.now()) + input.renewalDelayMs;
  if (await clock.until(renewAt, () => denied)) return finish('customer_denied');
  await condition(allHandlersFinished);
  const { carried: _carried, ...next } = input;
  return continueAsNew<typeof creditOffersWorkflow>({
    ...next,
    issueAt: renewAt,
    clock: clock.state(),
  });
}
