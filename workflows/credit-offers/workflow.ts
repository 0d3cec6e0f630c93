import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import type { CreditOfferStatus } from '../../src/domain/credit/offers.js';
import { databaseWrite } from '../presets.js';
import {
  acceptOfferUpdate,
  currentOfferQuery,
  customerDeniedSignal,
  loanFinishedSignal,
  releaseOfferSignal,
  type CreditOffersInput,
  type CreditOffersOutcome,
  type LiveOffer,
} from './messages.js';

const { issueOffer, recordOfferMove, recordOfferSpent } =
  proxyActivities<Activities>(databaseWrite);

const hexId = (prefix: string) => `${prefix}_${uuid4().replaceAll('-', '')}`;

/**
 * One per customer (`credit-offers/{cust_id}`), started when the customer becomes active. The only
 * writer of the customer's offers: it issues an offer, holds it through its life — expiry at
 * `valid_until` is a durable timer, acceptance an Update, a loan's end a signal — and after an
 * expiry or a repaid loan waits `OFFER_RENEWAL_DELAY` and continues as new to issue the next one.
 * Each run owns one offer, so the history stays small however long the customer stays.
 */
export async function creditOffersWorkflow(input: CreditOffersInput): Promise<CreditOffersOutcome> {
  const tenant = { partnerId: input.partnerId, environment: input.environment };
  let offer: LiveOffer | null = input.carried ?? null;
  let denied = false;
  let released = false;
  let loanFinished = false;

  // Moves run one at a time, so the timer and an acceptance never both act on one offer.
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(step: () => Promise<T>): Promise<T> => {
    const run = queue.then(step);
    queue = run.catch(() => undefined);
    return run;
  };

  const move = async (live: LiveOffer, status: CreditOfferStatus, loanId = live.loanId) => {
    await recordOfferMove({ tenant, offerId: live.id, status, loanId, eventId: hexId('evt') });
    offer = { ...live, status, loanId };
    showDetails();
  };

  const assertAcceptable = ({ offerId }: { offerId: string }): LiveOffer => {
    if (
      !offer ||
      offer.id !== offerId ||
      offer.status !== 'available' ||
      denied ||
      Date.now() >= offer.validUntil
    ) {
      const status = offer?.id === offerId && !denied ? offer.status : 'not available';
      throw ApplicationFailure.create({
        type: 'credit_offer_unavailable',
        message: `The credit offer is ${status === 'available' ? 'expired' : status}.`,
        nonRetryable: true,
      });
    }
    return offer;
  };

  setHandler(
    acceptOfferUpdate,
    (request) => serialized(() => move(assertAcceptable(request), 'accepted', request.loanId)),
    { validator: (request: { offerId: string }) => void assertAcceptable(request) },
  );
  setHandler(releaseOfferSignal, ({ offerId, loanId }) => {
    if (offer?.id === offerId && offer.loanId === loanId && offer.status === 'accepted')
      released = true;
  });
  setHandler(loanFinishedSignal, ({ offerId, loanId }) => {
    if (offer?.id === offerId && offer.loanId === loanId && offer.status === 'accepted')
      loanFinished = true;
  });
  setHandler(customerDeniedSignal, () => {
    denied = true;
  });
  setHandler(currentOfferQuery, () => offer);

  /** What ops see for this workflow in the Temporal UI. */
  function showDetails(): void {
    setCurrentDetails(
      offer
        ? [
            `**Offer:** ${offer.id} · **Status:** ${offer.status}`,
            `**Approved amount:** ${formatBrl(offer.approvedAmount)} · **Valid until:** ${new Date(offer.validUntil).toISOString()}`,
            offer.loanId ? `**Loan:** ${offer.loanId}` : '',
          ].join('\n\n')
        : `No offer yet${denied ? ' (customer denied)' : ''}.`,
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
    });
    if (!issued) {
      showDetails();
      return 'not_eligible';
    }
    offer = { id: offerId, status: 'available', loanId: null, ...issued };
  }
  showDetails();

  for (;;) {
    const current: LiveOffer = offer;
    // Continue as new only with nothing pending: a signal's flag does not cross into the next run.
    const pending = () => denied || released || loanFinished;
    if (
      workflowInfo().continueAsNewSuggested &&
      (current.status === 'available' || current.status === 'accepted') &&
      !pending()
    ) {
      await condition(allHandlersFinished);
      if (!pending())
        return continueAsNew<typeof creditOffersWorkflow>({ ...input, carried: offer });
    }
    if (current.status === 'available') {
      const remaining = current.validUntil - Date.now();
      if (!denied && remaining > 0)
        await condition(() => denied || offer?.status !== 'available', remaining);
      await serialized(async () => {
        if (offer?.status !== 'available') return; // accepted meanwhile
        if (denied) await move(offer, 'cancelled');
        else if (Date.now() >= offer.validUntil) await move(offer, 'expired');
      });
    } else if (current.status === 'accepted') {
      await condition(() => released || loanFinished);
      if (loanFinished) {
        await serialized(() => recordOfferSpent({ tenant, offerId: current.id }));
        break;
      }
      released = false;
      await serialized(async () => {
        if (denied) await move(current, 'cancelled', current.loanId);
        else if (Date.now() < current.validUntil) await move(current, 'available', null);
        else await move(current, 'expired');
      });
    } else if (current.status === 'cancelled') {
      return 'customer_denied';
    } else {
      break; // expired
    }
  }

  // Expired or spent: the next offer follows after the renewal delay, in a fresh run.
  if (await condition(() => denied, input.renewalDelayMs)) return 'customer_denied';
  await condition(allHandlersFinished);
  const { carried: _carried, ...next } = input;
  return continueAsNew<typeof creditOffersWorkflow>(next);
}

/** `R$ 12345.67` from integer centavos, for the ops details (string work, no division). */
function formatBrl(centavos: number): string {
  const digits = String(centavos).padStart(3, '0');
  return `R$ ${digits.slice(0, -2)}.${digits.slice(-2)}`;
}
