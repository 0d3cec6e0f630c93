import { ApplicationFailure } from '@temporalio/common';
import { activeChargeOf, addRefundDue, closeCharge } from '../src/db/queries/charges.js';
import { balancesByAccount, loanAccountBalances, postEntries } from '../src/db/queries/ledger.js';
import { changeLoanRow, insertLoanTransaction, lockAndReadLoan } from '../src/db/queries/loans.js';
import { refinancedTotal } from '../src/db/queries/refinancings.js';
import {
  lockPayout,
  recordPayoutOutcome,
  recordPayoutRefused,
  storePayout,
  type Payout,
} from '../src/db/queries/payouts.js';
import { businessDate } from '../src/domain/business-date.js';
import { payoutReturnedEntries } from '../src/domain/ledger/postings.js';
import { chargeEventTypes } from '../src/domain/loans/charges.js';
import { ledgerStep, loanEventTypes } from '../src/domain/loans/loans.js';
import {
  payoutBeneficiary,
  type PayoutOutcome,
  type PayoutStatus,
} from '../src/domain/payouts/payouts.js';
import type { Tenant } from '../src/domain/tenant.js';
import { presentCharge } from '../src/presenters/charges.js';
import { presentLoan } from '../src/presenters/loans.js';
import type { Payout as PspPayout } from '../src/psp/client.js';
import { PspError } from '../src/psp/errors.js';
import type { NewEvent } from '../src/webhooks/fan-out.js';
import type { ActivityDeps } from './index.js';
import { writeWithEvents } from './write-with-events.js';

/** The first wait before a payout's outcome is asked of the PSP, when PAYOUT_POLL_INTERVAL is not given. */
export const DEFAULT_PAYOUT_POLL_INTERVAL_MS = 2 * 60_000;

/** Where a loan's payout stands, as the loan's workflow decides on it. */
export interface PayoutState {
  payoutId: string;
  status: PayoutStatus;
  /** When the PSP settled it (confirmed or failed), RFC 3339. */
  settledAt: string | null;
  failureReason: string | null;
  returnReason: string | null;
}

/** What sending a loan's payout did: sent (and where it stands), or why the loan keeps ops' path. */
export type SentPayout =
  | ({ sent: true; pollIntervalMs: number } & PayoutState)
  | { sent: false; reason: 'no_psp' | 'no_pix_key' };

const stateOf = (payout: Payout): PayoutState => ({
  payoutId: payout.id,
  status: payout.status,
  settledAt: payout.settledAt?.toISOString() ?? null,
  failureReason: payout.failureReason,
  returnReason: payout.returnReason,
});

/** The PSP's payout (an answer, a poll, a notification) as the service records it. */
export const outcomeOf = (payout: PspPayout): PayoutOutcome => ({
  status: payout.status,
  pspPayoutId: payout.id,
  endToEndId: payout.endToEndId,
  failureReason: payout.failureReason,
  returnReason: payout.returnReason,
  at: payout.updatedAt,
});

/**
 * A refusal the PSP will repeat (400: the request breaks its rules) fails the payout; anything
 * else — the PSP away, our credentials refused, a key it says it holds with another request — is
 * retried by Temporal (with backoff, for as long as it takes), since the payout may exist there.
 */
const refusedForGood = (error: unknown): error is PspError =>
  error instanceof PspError && error.code === 'rejected';

export function createPayoutActivities(deps: ActivityDeps) {
  const psp = deps.psp;
  const pollIntervalMs = deps.loans.payoutPollIntervalMs ?? DEFAULT_PAYOUT_POLL_INTERVAL_MS;

  /** Records what the PSP said of `payoutId` in its own transaction; answers where it stands. */
  const record = async (payoutId: string, outcome: PayoutOutcome): Promise<PayoutState> => {
    const recorded = await deps.db.transaction((tx) => recordPayoutOutcome(tx, payoutId, outcome));
    if (!recorded) throw new Error(`payout ${payoutId} is not stored`);
    return stateOf(recorded.payout);
  };

  return {
    /**
     * Sends a production loan's payout through the PSP (contract §16), exactly once: the payout is
     * stored first (`sending`, with the amount released and the borrower's Pix key as they are
     * now), then sent under its id as idempotency key, then the PSP's answer recorded. A retry —
     * the worker killed before the call, or after it before the answer was recorded — sends the
     * stored request again under the same key, and the PSP answers the payout it made the first
     * time. No PSP configured, or a loan paid to a bank account: nothing is sent, and ops' manual
     * path stays the loan's.
     */
    async sendDisbursementPayout(input: {
      tenant: Tenant;
      loanId: string;
      payoutId: string;
    }): Promise<SentPayout> {
      if (!psp) return { sent: false, reason: 'no_psp' };
      const stored = await deps.db.transaction(async (tx) => {
        const loan = await lockAndReadLoan(tx, input.tenant, input.loanId);
        if (!loan)
          throw ApplicationFailure.nonRetryable(`loan ${input.loanId} not found`, 'loan_not_found');
        const beneficiary = payoutBeneficiary(loan.disbursementAccount);
        if (!beneficiary) return null;
        return storePayout(tx, {
          id: input.payoutId,
          partnerId: input.tenant.partnerId,
          environment: input.tenant.environment,
          loanId: input.loanId,
          // Contract §17: a refinancing's payoffs stay in the book; only the new money leaves.
          amount:
            loan.figures.requested_amount - (await refinancedTotal(tx, input.tenant, loan.id)),
          beneficiary,
          status: 'sending',
        });
      });
      if (!stored) return { sent: false, reason: 'no_pix_key' };
      if (stored.status !== 'sending') return { sent: true, pollIntervalMs, ...stateOf(stored) };
      let answer: PspPayout;
      try {
        answer = await psp.sendPayout(stored.id, {
          amount: stored.amount,
          beneficiary: stored.beneficiary,
          description: `Loan ${stored.loanId}`,
        });
      } catch (error) {
        if (!refusedForGood(error)) throw error;
        const failed = await deps.db.transaction((tx) =>
          recordPayoutRefused(tx, stored.id, error.message),
        );
        return { sent: true, pollIntervalMs, ...stateOf(failed) };
      }
      return { sent: true, pollIntervalMs, ...(await record(stored.id, outcomeOf(answer))) };
    },

    /**
     * Where a loan's payout stands: as stored (after a notification), or — `ask` — as the PSP says
     * now (`GET /payouts/{id}`, recorded first): the fallback when no notification came.
     */
    async checkPayout(input: { payoutId: string; ask: boolean }): Promise<PayoutState> {
      const stored = await deps.db.transaction((tx) => lockPayout(tx, input.payoutId));
      if (!stored) throw new Error(`payout ${input.payoutId} is not stored`);
      if (!input.ask || !psp || stored.pspPayoutId === null) return stateOf(stored);
      return record(stored.id, outcomeOf(await psp.getPayout(stored.pspPayoutId)));
    },

    /**
     * An active loan's payout came back (contract §16): the loan is `cancelled`
     * (`payout_returned`) with a `payout_returned` transaction undoing it in the ledger; whatever
     * the borrower paid is due back (`refund_due_amount`, `loan.refund_due`); an active charge is
     * cancelled. A loan no longer active (finished, say) is left as it is, for ops: answered
     * false. Written already (a retry): true, nothing written again.
     */
    async recordPayoutReturned(input: {
      tenant: Tenant;
      loanId: string;
      payoutId: string;
      at: string;
      transactionId: string;
      eventIds: { cancelled: string; refundDue: string; chargeCancelled: string };
    }): Promise<boolean> {
      return writeWithEvents(deps, input.tenant, async (tx) => {
        const loan = await lockAndReadLoan(tx, input.tenant, input.loanId);
        if (!loan)
          throw ApplicationFailure.nonRetryable(`loan ${input.loanId} not found`, 'loan_not_found');
        if (loan.cancellationReason === 'payout_returned') return { result: true, events: [] };
        const payout = await lockPayout(tx, input.payoutId);
        if (payout?.status !== 'returned' || loan.status !== 'active') {
          deps.logger.error(
            { loanId: loan.id, payoutId: input.payoutId, status: loan.status },
            'a payout came back for a loan that is not active: left for ops',
          );
          return { result: false, events: [] };
        }
        const balances = balancesByAccount(await loanAccountBalances(tx, loan.id));
        const entries = payoutReturnedEntries(payout.amount, balances);
        const refund = entries
          .filter((entry) => entry.account === 'refunds_payable')
          .reduce((sum, entry) => sum + entry.amount, 0);
        const at = new Date(input.at);
        const written = await insertLoanTransaction(tx, input.tenant, loan.id, {
          id: input.transactionId,
          step: ledgerStep.payoutReturned,
          type: 'payout_returned',
          amount: payout.amount,
          principalAmount: balances.loan_principal ?? 0,
          refundAmount: refund,
          occurredAt: at,
        });
        if (!written) throw new Error(`loan ${loan.id}: its payout's return written concurrently`);
        await postEntries(tx, input.tenant, written, entries);
        await changeLoanRow(tx, loan.id, {
          status: 'cancelled',
          cancellationReason: 'payout_returned',
          disbursementStatus: 'failed',
        });
        if (refund > 0) await addRefundDue(tx, loan.id, refund);
        const events: NewEvent[] = [];
        const open = await activeChargeOf(tx, loan.id);
        const cancelled = open && (await closeCharge(tx, open.id, 'cancelled'));
        if (cancelled)
          events.push({
            id: input.eventIds.chargeCancelled,
            type: chargeEventTypes.cancelled,
            data: presentCharge(cancelled),
            createdAt: cancelled.updatedAt,
          });
        const after = (await lockAndReadLoan(tx, input.tenant, loan.id))!;
        const shown = presentLoan(after, deps.loans.signingUrl, businessDate(at));
        events.push({
          id: input.eventIds.cancelled,
          type: loanEventTypes.cancelled,
          data: shown,
          createdAt: after.updatedAt,
        });
        if (refund > 0)
          events.push({
            id: input.eventIds.refundDue,
            type: loanEventTypes.refundDue,
            data: { ...shown, refund: { amount: refund, reference: null } },
            createdAt: after.updatedAt,
          });
        return { result: true, events };
      });
    },
  };
}
