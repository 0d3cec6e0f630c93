import { WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { DbOrTx } from '../src/db/client.js';
import {
  activeChargeOf,
  addRefundDue,
  closeCharge,
  findChargeById,
  findReceivedPix,
  markPixRecorded,
  type Charge,
} from '../src/db/queries/charges.js';
import { withdrawalBalances } from '../src/db/queries/assignments.js';
import { postEntries } from '../src/db/queries/ledger.js';
import { findReceiptTransaction } from '../src/db/queries/receipts.js';
import {
  changeLoanRow,
  findLoanForOps,
  findPaymentByReference,
  insertLoanTransaction,
  lockAndReadLoan,
  repaymentOf,
  repaymentTerms,
  type LoanView,
} from '../src/db/queries/loans.js';
import { businessDate } from '../src/domain/business-date.js';
import { chargeEventTypes } from '../src/domain/loans/charges.js';
import { planPixBooking } from '../src/domain/loans/pix-booking.js';
import { endedStatuses, ledgerStep, loanEventTypes } from '../src/domain/loans/loans.js';
import type { Tenant } from '../src/domain/tenant.js';
import { presentCharge } from '../src/presenters/charges.js';
import { presentLoan } from '../src/presenters/loans.js';
import { workflowIds } from '../src/temporal/workflow-ids.js';
import type { WorkflowStart } from '../src/temporal/outbox.js';
import type { NewEvent } from '../src/webhooks/fan-out.js';
import { recordPixUpdate, type PixOutcome } from '../workflows/loan/messages.js';
import type { ActivityDeps } from './index.js';
import { progressOf } from './loans.js';
import { automaticRefund } from './refunds.js';
import {
  agreementTakingPayment,
  recordAgreementPayment,
  type AgreementPayment,
} from './agreement-payments.js';
import { writeWithEvents } from './write-with-events.js';

/** The events a Pix's recording may write, their ids made by the workflow (a retry reuses them). */
export interface PixEventIds {
  payment: string;
  finished: string;
  cancelled: string;
  refundDue: string;
  chargePaid: string;
  chargeCancelled: string;
}

const latest = (a: Date, b: Date) => (a.getTime() >= b.getTime() ? a : b);

export function createPixActivities(deps: ActivityDeps) {
  const present = (loan: LoanView, asOf: Date) =>
    presentLoan(loan, deps.loans.signingUrl, businessDate(asOf));
  const loanEvent = (
    id: string,
    type: string,
    loan: LoanView,
    asOf: Date,
    extra: Record<string, unknown> = {},
  ): NewEvent => ({
    id,
    type,
    data: { ...present(loan, asOf), ...extra },
    createdAt: loan.updatedAt,
  });
  const chargeEvent = (id: string, type: string, charge: Charge): NewEvent => ({
    id,
    type,
    data: presentCharge(charge),
    createdAt: charge.updatedAt,
  });

  /**
   * Books one received Pix on its loan (contract §14), in one transaction under the loan's lock:
   * never refused, exactly once (its end-to-end id is the payment's `reference`).
   *
   * - The loan active: a payment of §13 dated when the Pix was paid — but never before the loan's
   *   latest payment nor after `now` (the customer's clock): money is not refused for a date.
   *   What exceeds the payoff amount is due back (`refunds_payable`, `loan.refund_due`); a Pix
   *   that covers the payoff settles the loan (`payoff`, `loan.finished`).
   * - Paying a withdrawal charge that was active when paid (within the window) with at least its
   *   amount: the loan is `cancelled` (`withdrawal`): its principal account closed, the IOF
   *   reversed, the interest and late charges paid taken back (they count as money returned);
   *   anything above is due back. Any other Pix on it is a payment (see `withdraws`).
   * - The loan no longer active: all of it is due back (`overpayment`).
   *
   * The charge it pays (if still active) becomes `paid`; a loan that ends cancels its active
   * charge. Answers where the loan stands.
   */
  async function recordPixOnLoan(
    tx: DbOrTx,
    input: { endToEndId: string; now: Date; transactionId: string; eventIds: PixEventIds },
  ): Promise<{ result: PixOutcome; events: NewEvent[]; starts?: WorkflowStart[] }> {
    const pix = await findReceivedPix(tx, input.endToEndId);
    if (!pix?.loanId || !pix.partnerId || !pix.environment)
      throw ApplicationFailure.nonRetryable(
        `Pix ${input.endToEndId} names no loan`,
        'pix_unmatched',
      );
    const tenant: Tenant = { partnerId: pix.partnerId, environment: pix.environment };
    const before = await lockAndReadLoan(tx, tenant, pix.loanId);
    if (!before)
      throw ApplicationFailure.nonRetryable(`loan ${pix.loanId} not found`, 'loan_not_found');
    const outcome = (loan: LoanView, repeated: boolean): PixOutcome => ({
      ...progressOf(repaymentOf(loan)),
      status: loan.status,
      repeated,
      chargeId: pix.chargeId,
    });
    // Booked already: its transaction is named on it (a worker of any release sets both at once).
    if (pix.transactionId || (await findPaymentByReference(tx, before.id, pix.endToEndId, 'pix')))
      return { result: outcome(before, true), events: [] };
    // A Pix that came unmatched has been in `unidentified_receipts` since it arrived.
    const unidentified = await findReceiptTransaction(tx, pix.endToEndId, 'received');

    const charge = pix.chargeId ? await findChargeById(tx, pix.chargeId) : undefined;
    // Dated when it was paid, but never before the loan's money left (a Pix matched by hand may
    // have come earlier) nor before its latest payment, nor after now.
    const last = repaymentOf(before).last_paid_at;
    const earliest = [before.disbursedAt, last ? new Date(last) : null].reduce<Date>(
      (a, b) => (b ? latest(a, b) : a),
      pix.paidAt,
    );
    const paidAt = new Date(Math.min(earliest.getTime(), input.now.getTime()));
    const date = businessDate(paidAt);
    const base = {
      id: input.transactionId,
      step: ledgerStep.pix(pix.endToEndId),
      reference: pix.endToEndId,
      referenceSource: 'pix' as const,
      amount: pix.amount,
      // Matched to the loan by hand: who did, and who approved it.
      actor: pix.matchedBy,
      approvedBy: pix.matchApprovedBy,
      occurredAt: paidAt,
    };
    const events: NewEvent[] = [];
    // Contract §17: a live agreement takes the payment first (activities/agreement-payments.ts).
    const taking =
      before.status === 'active' && charge?.scope !== 'withdrawal'
        ? await agreementTakingPayment(tx, before)
        : null;
    let underAgreement: AgreementPayment | undefined;
    const plan = planPixBooking({
      amount: pix.amount,
      date,
      paidAt: paidAt.toISOString(),
      paidAtByBank: pix.paidAt.toISOString(),
      charge: charge && {
        scope: charge.scope,
        status: charge.status,
        amount: charge.amount,
        expiresAt: charge.expiresAt.toISOString(),
      },
      loan: {
        status: before.status,
        figures: before.figures,
        repayment: repaymentOf(before),
        terms: repaymentTerms(before),
        writtenOffAt: before.writtenOffAt,
        assignmentId: before.assignmentId,
        agreement: taking
          ? {
              payoff: taking.payoff(date),
              allocate: (amount) => {
                underAgreement = taking.pay({
                  amount,
                  date,
                  paidAt: paidAt.toISOString(),
                  applyTo: 'next',
                });
                return underAgreement.allocation;
              },
            }
          : undefined,
      },
      ...(unidentified ? { from: 'unidentified_receipts' as const } : {}),
      // Read only when the Pix may withdraw the loan.
      ...(charge?.scope === 'withdrawal' && before.status === 'active'
        ? { balances: await withdrawalBalances(tx, before) }
        : {}),
    });
    const { refund } = plan;
    let ended = false;
    let written;

    if (plan.type === 'overpayment') {
      written = await insertLoanTransaction(tx, tenant, before.id, {
        ...base,
        type: 'overpayment',
        refundAmount: refund,
      });
    } else if (plan.type === 'withdrawal') {
      written = await insertLoanTransaction(tx, tenant, before.id, {
        ...base,
        type: 'withdrawal',
        principalAmount: plan.principal,
        refundAmount: refund,
      });
      await changeLoanRow(tx, before.id, { status: 'cancelled', cancellationReason: 'withdrawal' });
      ended = true;
    } else {
      const { allocation } = plan;
      if (underAgreement)
        events.push(
          ...(await recordAgreementPayment(
            tx,
            tenant,
            before,
            underAgreement,
            paidAt.toISOString(),
            deps.loans.agreementAcceptanceUrl,
          )),
        );
      written = await insertLoanTransaction(tx, tenant, before.id, {
        ...base,
        type: plan.type,
        principalAmount: allocation.principal,
        interestAmount: allocation.interest,
        lateFeeAmount: allocation.lateFee,
        lateInterestAmount: allocation.lateInterest,
        discountAmount: allocation.discount,
        refundAmount: refund > 0 ? refund : null,
        allocation: allocation.rows,
      });
      const progress = progressOf(allocation.after);
      await changeLoanRow(tx, before.id, {
        repayment: allocation.after,
        paidInstallments: progress.paidInstallments,
        ...(allocation.finished ? { status: 'finished' as const } : {}),
      });
      ended = allocation.finished;
      const after = await lockAndReadLoan(tx, tenant, before.id);
      events.push(
        loanEvent(input.eventIds.payment, loanEventTypes.paymentReceived, after!, paidAt, {
          payment: {
            amount: pix.amount,
            paid_at: paidAt.toISOString(),
            reference: pix.endToEndId,
            apply_to: 'next',
            principal_amount: allocation.principal,
            interest_amount: allocation.interest,
            late_fee_amount: allocation.lateFee,
            late_interest_amount: allocation.lateInterest,
            discount_amount: allocation.discount,
            refund_amount: refund,
            charge_id: pix.chargeId,
            installment_number: null,
          },
        }),
      );
    }
    if (!written) throw new Error(`Pix ${pix.endToEndId} written concurrently`);
    await postEntries(tx, tenant, written, plan.entries);
    if (refund > 0) await addRefundDue(tx, before.id, refund);
    await markPixRecorded(tx, pix.endToEndId, written.id);

    // The charge it paid: any active charge but a withdrawal's, which is paid only by the Pix that
    // withdraws (one paid in time is paid though its timer expired it meanwhile); any other Pix on
    // it leaves it as it was — active for the withdrawal still, or expired.
    const paysCharge =
      charge &&
      (plan.type === 'withdrawal' || (charge.status === 'active' && charge.scope !== 'withdrawal'));
    if (paysCharge) {
      const paid = await closeCharge(
        tx,
        charge.id,
        'paid',
        { paidAt, paymentReference: pix.endToEndId },
        ['active', 'expired'],
      );
      if (paid) events.push(chargeEvent(input.eventIds.chargePaid, chargeEventTypes.paid, paid));
    }
    if (ended) {
      const open = await activeChargeOf(tx, before.id);
      const cancelled = open && (await closeCharge(tx, open.id, 'cancelled'));
      if (cancelled)
        events.push(
          chargeEvent(input.eventIds.chargeCancelled, chargeEventTypes.cancelled, cancelled),
        );
    }
    const after = (await lockAndReadLoan(tx, tenant, before.id))!;
    if (after.status === 'finished' && ended)
      events.push(loanEvent(input.eventIds.finished, loanEventTypes.finished, after, paidAt));
    if (after.status === 'cancelled' && ended)
      events.push(loanEvent(input.eventIds.cancelled, loanEventTypes.cancelled, after, paidAt));
    if (refund > 0)
      events.push(
        loanEvent(input.eventIds.refundDue, loanEventTypes.refundDue, after, paidAt, {
          refund: { amount: refund, reference: pix.endToEndId },
        }),
      );
    // Money due back on a production loan leaves by devolução after REFUND_AFTER (contract §16).
    const starts = refund > 0 ? automaticRefund(deps, tenant, before.id, written.id) : [];
    return {
      result: { ...outcome(after, false), ...(underAgreement ? { agreementChanged: true } : {}) },
      events,
      starts,
    };
  }

  return {
    /** The loan's workflow books a Pix (see `recordPixOnLoan`), at `at` on the customer's clock. */
    async recordPix(input: {
      tenant: Tenant;
      endToEndId: string;
      at: string;
      transactionId: string;
      eventIds: PixEventIds;
    }): Promise<PixOutcome> {
      return writeWithEvents(deps, input.tenant, (tx) =>
        recordPixOnLoan(tx, { ...input, now: new Date(input.at) }),
      );
    },

    /**
     * A received Pix's way to its loan (the `pix/{end_to_end_id}` workflow's one step): while the
     * loan's workflow runs, it books the Pix (an Update named by the Pix, so a retry finds the
     * first); once it has closed — the loan ended, nothing else writes it — the Pix is booked here.
     */
    async settlePix(input: {
      endToEndId: string;
      transactionId: string;
      eventIds: PixEventIds;
    }): Promise<PixOutcome | null> {
      const pix = await findReceivedPix(deps.db, input.endToEndId);
      if (!pix?.loanId || !pix.partnerId || !pix.environment) return null; // unmatched: ops' list
      const loan = await findLoanForOps(deps.db, pix.loanId);
      if (!loan) return null;
      const tenant: Tenant = { partnerId: pix.partnerId, environment: pix.environment };
      if (!endedStatuses.includes(loan.status)) {
        try {
          return await deps.temporal.workflow
            .getHandle(workflowIds.loan(loan.id))
            .executeUpdate(recordPixUpdate, {
              args: [{ endToEndId: input.endToEndId }],
              updateId: `pix:${input.endToEndId}`,
            });
        } catch (error) {
          // Only a workflow that has closed sends the Pix here; anything else is retried.
          if (!(error instanceof WorkflowNotFoundError)) throw error;
        }
        const now = await findLoanForOps(deps.db, loan.id);
        if (!now || !endedStatuses.includes(now.status))
          throw new Error(`loan ${loan.id} is ${now?.status} but its workflow has closed`);
      }
      const realNow = new Date(Date.now() + loan.clockOffsetMs);
      return writeWithEvents(deps, tenant, (tx) => recordPixOnLoan(tx, { ...input, now: realNow }));
    },
  };
}
