import type { ClockState } from '../sandbox-clock/messages.js';
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { CreditOfferStatus } from '../../src/domain/credit/offers.js';
import type { Environment } from '../../src/domain/environments.js';

/**
 * The contract of a customer's credit-offers workflow (`credit-offers/{cust_id}`): its input and
 * the messages the loan workflow and the onboarding activities send it. Imported by both
 * sides, so the API never imports the workflow module itself.
 */
export interface CreditOffersInput {
  customerId: string;
  partnerId: string;
  environment: Environment;
  /** `valid_until` = creation + this (OFFER_VALIDITY). */
  offerValidityMs: number;
  /** A new offer follows an expired or spent one after this (OFFER_RENEWAL_DELAY). */
  renewalDelayMs: number;
  /** The offer a run carries across continue-as-new; a run without one issues a new offer. */
  carried?: LiveOffer;
  /** When a renewal's offer is issued, on the customer's clock (default: now on that clock). */
  issueAt?: number;
  /** The customer's sandbox clock (absent: real time). */
  clock?: ClockState;
  /** Events before a run continues as new (tests lower it; see workflows/history.ts). */
  historyLimit?: number;
}

/** What the workflow keeps of its current offer. */
export interface LiveOffer {
  id: string;
  status: CreditOfferStatus;
  /** Epoch milliseconds of `valid_until`. */
  validUntil: number;
  /** Centavos, for the ops details. */
  approvedAmount: number;
  loanId: string | null;
}

/** How a run ends: no offer for this customer, or the customer was denied. */
export type CreditOffersOutcome = 'not_eligible' | 'customer_denied';

/**
 * A loan was created from the offer (sent by the loan's workflow when it starts). `POST /v3/loans`
 * wrote the acceptance in the loan's own transaction, under a lock on the offer that also orders it
 * against this workflow's moves; the signal only brings the workflow up to date.
 */
export const offerAcceptedSignal =
  defineSignal<[{ offerId: string; loanId: string }]>('offerAccepted');

/** The offer's loan was cancelled or failed before disbursement: the offer is usable again. */
export const releaseOfferSignal =
  defineSignal<[{ offerId: string; loanId: string; reason: 'loan_cancelled' | 'loan_error' }]>(
    'releaseOffer',
  );

/** The offer's loan was repaid: a new offer follows after the renewal delay. */
export const loanFinishedSignal =
  defineSignal<[{ offerId: string; loanId: string }]>('loanFinished');

/** The customer was denied (sent after the denial commits): no offer stays usable. */
/**
 * The customer was denied. It names the customer (issue 37): a signal with a payload passes the
 * payload codec, so one sent in clear to Temporal's frontend never reaches the handler; one
 * without (forged, or from an API of the release before) is ignored — the offers workflow also
 * reads a denial off the records before it issues an offer.
 */
/**
 * Contract §17: the release of refinancing loan `toLoanId` paid off `fromLoanId`, whose accepted
 * offer it was made on: the offer is the new loan's from now (the records say so already), so
 * that loan's end is the one that releases or spends it.
 */
export const offerLoanReplacedSignal =
  defineSignal<[{ offerId: string; fromLoanId: string; toLoanId: string }]>('offerLoanReplaced');

export const customerDeniedSignal = defineSignal<[{ customerId: string }]>('customerDenied');

export const currentOfferQuery = defineQuery<LiveOffer | null>('currentOffer');

/** Where an offer stands in the database after a move was asked for (see `recordOfferMove`). */
export interface OfferState {
  status: CreditOfferStatus;
  loanId: string | null;
}

/**
 * Where an offer stands in the records: its state and, once a loan has accepted it, whether that
 * loan has ended — released the offer (`cancelled`, `error`) or repaid it (`finished`). The loan
 * tells the offer's workflow each of these by signal; the records say it too, so a message lost on
 * the way is found at the next move.
 */
export interface StoredOffer extends OfferState {
  loanEnded?: 'released' | 'finished' | null;
}
