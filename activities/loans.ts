import { remindersStart } from '../src/temporal/reminder-workflows.js';
import type { WorkflowStart } from '../src/temporal/outbox.js';
import { ApplicationFailure } from '@temporalio/common';
import type { DbOrTx } from '../src/db/client.js';
import {
  changeLoanRow,
  findPaymentByReference,
  insertLoanTransaction,
  lockAndReadLoan,
  loanTransactionAmount,
  recordSignerSignature,
  repaymentOf,
  repaymentTerms,
  type LoanView,
} from '../src/db/queries/loans.js';
import {
  allocatePayment,
  isPaid,
  payoffAmount,
  PaymentAboveBalanceError,
  type Repayment,
} from '../src/domain/loans/allocation.js';
import {
  bookedAt,
  isSamePayment,
  type PaymentRequest,
  type RepaymentProgress,
} from '../src/domain/loans/payments.js';
import {
  cancellableStatuses,
  ledgerStep,
  loanEventTypes,
  type LoanError,
} from '../src/domain/loans/loans.js';
import { amountDue, payoffQuote } from '../src/domain/loans/repayment.js';
import { postEntries } from '../src/db/queries/ledger.js';
import { settleRefinancings } from '../src/db/queries/refinancings.js';
import { bookedFor, disbursementEntries, paymentEntries } from '../src/domain/ledger/postings.js';
import { releasedOn } from '../src/domain/credit/release-repricing.js';
import type { IofRates } from '../src/domain/credit/simulation.js';
import { businessDate } from '../src/domain/business-date.js';
import type { Actors } from '../src/domain/operators.js';
import type { Tenant } from '../src/domain/tenant.js';
import type { AcceptanceUrl } from '../src/presenters/agreements.js';
import { presentLoan, type SigningUrl } from '../src/presenters/loans.js';
import type { NewEvent } from '../src/webhooks/fan-out.js';
import { writeWithEvents } from './write-with-events.js';
import {
  planAgreementPayment,
  recordAgreementPayment,
  type AgreementPayment,
} from './agreement-payments.js';
import type { ActivityDeps } from './index.js';

export interface LoanActivityDeps {
  signingUrl: SigningUrl;
  /** The acceptance page's address of a payment agreement (its events show it). */
  agreementAcceptanceUrl: AcceptanceUrl;
  /** The IOF rates of loans priced before they kept their own (`iof_terms`). */
  iof: IofRates;
  /** What production BR Codes name (contract §14): the lender's Pix key, name and city. */
  pix: { key: string; merchantName: string; city: string };
  /**
   * REFUND_AFTER (contract §16): how long money due back on a production loan waits before it
   * leaves by devolução on its own; absent: a day.
   */
  refundAfterMs?: number;
  /** PAYOUT_POLL_INTERVAL: the first wait before a payout's outcome is asked of the PSP (2 min). */
  payoutPollIntervalMs?: number;
  /** WRITE_OFF_AFTER_DAYS (contract §17): a row overdue longer writes the loan off; absent: 360. */
  writeOffAfterDays?: number;
  /** AGREEMENT_BREAK_DAYS (contract §17): an agreement row overdue longer breaks it; absent: 30. */
  agreementBreakDays?: number;
}

export function createLoanActivities(deps: ActivityDeps) {
  /** The loan as of a business instant (the step's, on the customer's clock). */
  const present = (loan: LoanView, asOf: string) =>
    presentLoan(loan, deps.loans.signingUrl, businessDate(new Date(asOf)));

  const write = <T>(
    tenant: Tenant,
    change: (
      tx: DbOrTx,
    ) => Promise<{ result: T; events: NewEvent[]; starts?: WorkflowStart[] | undefined }>,
  ) => writeWithEvents(deps, tenant, change);

  /** The loan under its row lock (see `lockAndReadLoan`); a loan that is not there is final. */
  async function lockedLoan(tx: DbOrTx, tenant: Tenant, loanId: string): Promise<LoanView> {
    const loan = await lockAndReadLoan(tx, tenant, loanId);
    if (!loan) throw ApplicationFailure.nonRetryable(`loan ${loanId} not found`, 'loan_not_found');
    return loan;
  }

  const event = (
    id: string,
    type: string,
    loan: LoanView,
    asOf: string,
    extra: Record<string, unknown> = {},
  ) =>
    ({
      id,
      type,
      data: { ...present(loan, asOf), ...extra },
      createdAt: loan.updatedAt,
    }) as NewEvent;
  const realNow = () => new Date().toISOString();

  return {
    /**
     * One signer's signature with `loan.signature_received`; the last one also moves the loan to
     * `processing` with `loan.processing`. A signer who has signed gets the first signature back.
     */
    async recordSignature(input: {
      tenant: Tenant;
      loanId: string;
      cpf: string;
      signedAt: string;
      ipAddress: string | null;
      userAgent: string | null;
      contractSha256: string;
      channel?: string;
      eventIds: { signature: string; processing: string };
    }): Promise<{ signedAt: string; allSigned: boolean }> {
      return write(input.tenant, async (tx) => {
        const before = await lockedLoan(tx, input.tenant, input.loanId);
        const signer = before.signers.find((s) => s.cpf === input.cpf);
        if (!signer)
          throw ApplicationFailure.nonRetryable('not a signer of this loan', 'signer_not_found');
        const allSignedBefore = before.signers.every((s) => s.signedAt !== null);
        if (signer.signedAt)
          return {
            result: { signedAt: signer.signedAt.toISOString(), allSigned: allSignedBefore },
            events: [],
          };
        if (before.status !== 'awaiting_signatures')
          throw ApplicationFailure.nonRetryable(`the loan is ${before.status}`, 'invalid_state');
        await recordSignerSignature(tx, input.loanId, input.cpf, {
          signedAt: new Date(input.signedAt),
          ipAddress: input.ipAddress,
          userAgent: input.userAgent,
          signedSha256: input.contractSha256,
          signedChannel: input.channel ?? null,
        });
        const allSigned = before.signers.every((s) => s.signedAt !== null || s.cpf === input.cpf);
        await changeLoanRow(tx, input.loanId, allSigned ? { status: 'processing' } : {});
        const after = await lockedLoan(tx, input.tenant, input.loanId);
        const signed = after.signers.find((s) => s.cpf === input.cpf)!;
        const events = [
          event(input.eventIds.signature, loanEventTypes.signatureReceived, after, realNow(), {
            signer: {
              name: signed.name,
              cpf: signed.cpf,
              signed_at: signed.signedAt?.toISOString() ?? null,
            },
          }),
        ];
        if (allSigned)
          events.push(
            event(input.eventIds.processing, loanEventTypes.processing, after, realNow()),
          );
        return { result: { signedAt: input.signedAt, allSigned }, events };
      });
    },

    /** Ends a loan before its disbursement: `cancelled` (with the reason) or `error`. */
    async recordLoanEnd(
      input: { tenant: Tenant; loanId: string; eventId: string } & (
        { status: 'cancelled'; cancellationReason: string } | { status: 'error'; error: LoanError }
      ),
    ): Promise<void> {
      await write(input.tenant, async (tx) => {
        const before = await lockedLoan(tx, input.tenant, input.loanId);
        if (before.status === input.status) return { result: undefined, events: [] }; // a retry
        if (!cancellableStatuses.includes(before.status))
          throw ApplicationFailure.nonRetryable(`the loan is ${before.status}`, 'invalid_state');
        await changeLoanRow(
          tx,
          input.loanId,
          {
            status: input.status,
            ...(input.status === 'cancelled'
              ? { cancellationReason: input.cancellationReason }
              : { error: input.error }),
            ...(input.status === 'error' && input.error.code === 'disbursement_failed'
              ? { disbursementStatus: 'failed' as const }
              : {}),
          },
          cancellableStatuses,
        );
        // Contract §17: the loans it would have refinanced are as they were, free again.
        await settleRefinancings(tx, input.tenant, input.loanId, 'void');
        const after = await lockedLoan(tx, input.tenant, input.loanId);
        const type = input.status === 'cancelled' ? loanEventTypes.cancelled : loanEventTypes.error;
        return { result: undefined, events: [event(input.eventId, type, after, realNow())] };
      });
    },

    /**
     * Ops (or the sandbox) start sending the money (contract §13): `disbursement_status` becomes
     * `claimed`, and the partner can no longer cancel. Only while `processing`.
     */
    async claimDisbursement(input: { tenant: Tenant; loanId: string }): Promise<void> {
      await write(input.tenant, async (tx) => {
        const before = await lockedLoan(tx, input.tenant, input.loanId);
        if (before.disbursementStatus === 'claimed') return { result: undefined, events: [] };
        if (before.status !== 'processing')
          throw ApplicationFailure.nonRetryable(`the loan is ${before.status}`, 'invalid_state');
        await changeLoanRow(tx, input.loanId, { disbursementStatus: 'claimed' });
        return { result: undefined, events: [] };
      });
    },

    /**
     * The money went out at `at`: the `disbursement` transaction, `active`, `loan.active`. Released
     * on a later date than priced, the loan is repriced for it first (contract §13): row 1, the IOF,
     * the CET, and `release_adjustment` saying what changed. A confirm without a claim claims too.
     */
    async recordDisbursement(
      input: {
        tenant: Tenant;
        loanId: string;
        at: string;
        transactionId: string;
        eventId: string;
      } & Actors,
    ): Promise<void> {
      await write(input.tenant, async (tx) => {
        const before = await lockedLoan(tx, input.tenant, input.loanId);
        const written = await insertDisbursement(tx, input.tenant, before, input);
        if (!written) return { result: undefined, events: [] }; // by an earlier attempt
        if (before.status !== 'processing')
          throw ApplicationFailure.nonRetryable(`the loan is ${before.status}`, 'invalid_state');
        const released = releasedOn(before, businessDate(new Date(input.at)), deps.loans.iof);
        if (released.warning) deps.logger.error({ loanId: input.loanId }, released.warning);
        await postEntries(tx, input.tenant, written, disbursementEntries(released.figures));
        await changeLoanRow(tx, input.loanId, {
          status: 'active',
          disbursedAt: new Date(input.at),
          disbursementStatus: 'confirmed',
          ...(released.adjustment
            ? { figures: released.figures, releaseAdjustment: released.adjustment }
            : {}),
        });
        const after = await lockedLoan(tx, input.tenant, input.loanId);
        return {
          result: undefined,
          events: [
            { ...event(input.eventId, loanEventTypes.active, after, input.at), actor: input.actor },
          ],
          // Its reminders (contract §17) run from now until it ends.
          starts: [remindersStart(after, deps.taskQueue)],
        };
      });
    },

    /**
     * A payment of installment `installmentNumber`: its `payment` transaction, the row paid,
     * `loan.payment_received`; the last also finishes the loan with `loan.finished`.
     */
    async recordPayment(input: {
      tenant: Tenant;
      loanId: string;
      installmentNumber: number;
      amount: number;
      paidAt: string;
      last: boolean;
      transactionId: string;
      eventIds: { payment: string; finished: string };
    }): Promise<void> {
      await write(input.tenant, async (tx) => {
        const before = await lockedLoan(tx, input.tenant, input.loanId);
        const written = await insertLoanTransaction(tx, input.tenant, input.loanId, {
          id: input.transactionId,
          step: ledgerStep.payment(input.installmentNumber),
          type: 'payment',
          amount: input.amount,
          installmentNumber: input.installmentNumber,
          occurredAt: new Date(input.paidAt),
        });
        if (!written) return { result: undefined, events: [] }; // by an earlier attempt
        if (before.status !== 'active' || before.paidInstallments !== input.installmentNumber - 1)
          throw ApplicationFailure.nonRetryable(
            `installment ${input.installmentNumber} is not the next due`,
            'invalid_state',
          );
        // The row's schedule split, and the late charges of its day.
        const row = before.figures.schedule[input.installmentNumber - 1]!;
        const due = amountDue(row, businessDate(new Date(input.paidAt)), before.lateChargeRates);
        await postEntries(
          tx,
          input.tenant,
          written,
          bookedFor(
            before,
            paymentEntries({
              amount: input.amount,
              principal: row.principal_amount,
              interest: input.amount - row.principal_amount - due.lateFee - due.lateInterest,
              lateFee: due.lateFee,
              lateInterest: due.lateInterest,
            }),
          ),
        );
        await changeLoanRow(tx, input.loanId, {
          paidInstallments: input.installmentNumber,
          paidDates: [input.paidAt],
          ...(input.last ? { status: 'finished' as const } : {}),
        });
        const after = await lockedLoan(tx, input.tenant, input.loanId);
        const events = [
          event(input.eventIds.payment, loanEventTypes.paymentReceived, after, input.paidAt, {
            payment: {
              amount: input.amount,
              paid_at: input.paidAt,
              installment_number: input.installmentNumber,
            },
          }),
        ];
        if (input.last)
          events.push(event(input.eventIds.finished, loanEventTypes.finished, after, input.paidAt));
        return { result: undefined, events };
      });
    },

    /**
     * A payment of any amount (contract §13), allocated over the rows in §13's order: its
     * `payment` (or `payoff`) transaction with what it paid of each row, the rows and the principal
     * left, `loan.payment_received`, and `loan.finished` when nothing is left to pay. Its reference
     * names it for good: recorded already with the same amount and `paid_at` (a retry, however
     * late), nothing is written and the loan's standing is answered; with anything else,
     * `payment_reference_conflict`. Refused: a `paid_at` before the latest payment's, an amount
     * above the payoff amount (`payment_above_payoff`), a loan that is not `active`.
     */
    async recordLoanPayment(input: {
      tenant: Tenant;
      loanId: string;
      payment: PaymentRequest;
      /**
       * When the workflow books it (RFC 3339, the customer's clock): the date of a payment that
       * states none. Absent in histories from before; the request's date then.
       */
      at?: string;
      transactionId: string;
      eventIds: { payment: string; finished: string };
    }): Promise<PaymentOutcome> {
      return write<PaymentOutcome>(input.tenant, async (tx) => {
        const before = await lockedLoan(tx, input.tenant, input.loanId);
        const recorded = await findPaymentByReference(
          tx,
          input.loanId,
          input.payment.reference,
          'manual',
        );
        if (recorded) {
          if (!isSamePayment(recorded, input.payment))
            throw ApplicationFailure.nonRetryable(
              `Payment ${input.payment.reference} was recorded with ${recorded.amount} centavos paid at ${recorded.occurredAt.toISOString()}.`,
              'payment_reference_conflict',
            );
          return { result: { ...progressOf(repaymentOf(before)), repeated: true }, events: [] };
        }
        if (before.status !== 'active')
          throw ApplicationFailure.nonRetryable(
            `The loan is ${before.status}; it takes no payments.`,
            'invalid_state',
          );
        const repayment = repaymentOf(before);
        const payment = bookedAt(input.payment, input.at, repayment.last_paid_at);
        if (
          repayment.last_paid_at &&
          Date.parse(payment.paidAt) < Date.parse(repayment.last_paid_at)
        )
          throw ApplicationFailure.nonRetryable(
            `A payment cannot be dated before the loan's latest payment (${repayment.last_paid_at}).`,
            'before_latest_payment',
          );
        const date = businessDate(new Date(payment.paidAt));
        const terms = repaymentTerms(before);
        let amount: number;
        let allocation;
        // Contract §17: a live agreement takes the payment first (activities/agreement-payments.ts).
        let underAgreement: AgreementPayment | null;
        try {
          underAgreement = await planAgreementPayment(tx, before, { ...payment, date });
          amount =
            underAgreement?.amount ??
            (payment.amount === 'payoff' ? payoffAmount(repayment, date, terms) : payment.amount);
          allocation =
            underAgreement?.allocation ??
            allocatePayment(
              repayment,
              { amount, date, paidAt: payment.paidAt, applyTo: payment.applyTo },
              terms,
            );
        } catch (error) {
          if (error instanceof PaymentAboveBalanceError)
            throw ApplicationFailure.nonRetryable(
              `The payoff amount on ${date} is ${error.payoffAmount} centavos; a payment cannot exceed it.`,
              'payment_above_payoff',
              { payoffAmount: error.payoffAmount },
            );
          throw error;
        }
        const agreementEvents = underAgreement
          ? await recordAgreementPayment(
              tx,
              input.tenant,
              before,
              underAgreement,
              payment.paidAt,
              deps.loans.agreementAcceptanceUrl,
            )
          : [];
        const written = await insertLoanTransaction(tx, input.tenant, input.loanId, {
          id: input.transactionId,
          step: ledgerStep.reference(payment.reference),
          type: payment.amount === 'payoff' ? 'payoff' : 'payment',
          amount,
          reference: payment.reference,
          referenceSource: 'manual',
          principalAmount: allocation.principal,
          interestAmount: allocation.interest,
          lateFeeAmount: allocation.lateFee,
          lateInterestAmount: allocation.lateInterest,
          discountAmount: allocation.discount,
          allocation: allocation.rows,
          actor: payment.actor ?? null,
          approvedBy: payment.approvedBy ?? null,
          occurredAt: new Date(payment.paidAt),
        });
        // The reference was looked up under the loan's lock: nothing else can have written it.
        if (!written) throw new Error(`payment ${payment.reference} written concurrently`);
        await postEntries(
          tx,
          input.tenant,
          written,
          bookedFor(before, paymentEntries({ amount, ...allocation })),
        );
        const progress = progressOf(allocation.after);
        await changeLoanRow(tx, input.loanId, {
          repayment: allocation.after,
          paidInstallments: progress.paidInstallments,
          ...(allocation.finished ? { status: 'finished' as const } : {}),
        });
        const after = await lockedLoan(tx, input.tenant, input.loanId);
        const events = [
          event(input.eventIds.payment, loanEventTypes.paymentReceived, after, payment.paidAt, {
            payment: {
              amount,
              paid_at: payment.paidAt,
              reference: payment.reference,
              apply_to: payment.applyTo,
              principal_amount: allocation.principal,
              interest_amount: allocation.interest,
              late_fee_amount: allocation.lateFee,
              late_interest_amount: allocation.lateInterest,
              discount_amount: allocation.discount,
              installment_number: null,
            },
          }),
        ];
        events.push(...agreementEvents);
        if (allocation.finished)
          events.push(
            event(input.eventIds.finished, loanEventTypes.finished, after, payment.paidAt),
          );
        return {
          result: {
            ...progress,
            repeated: false,
            ...(underAgreement ? { agreementChanged: true } : {}),
          },
          events: events.map((written) => ({ ...written, actor: payment.actor })),
        };
      });
    },

    /**
     * Installment `installmentNumber` was unpaid when its due date ended (`at`, on the customer's
     * clock): the row becomes overdue, with `loan.installment_overdue`. Paid meanwhile, or marked
     * already (a retry), nothing is written.
     */
    async recordOverdue(input: {
      tenant: Tenant;
      loanId: string;
      installmentNumber: number;
      at: string;
      eventId: string;
    }): Promise<void> {
      await write(input.tenant, async (tx) => {
        const before = await lockedLoan(tx, input.tenant, input.loanId);
        const n = input.installmentNumber;
        const row = repaymentOf(before).rows[n - 1];
        if (before.status !== 'active' || !row || isPaid(row) || before.overdueThrough >= n)
          return { result: undefined, events: [] };
        await changeLoanRow(tx, input.loanId, { overdueThrough: n });
        const after = await lockedLoan(tx, input.tenant, input.loanId);
        const shown = present(after, input.at).schedule[n - 1]!;
        return {
          result: undefined,
          events: [
            event(input.eventId, loanEventTypes.installmentOverdue, after, input.at, {
              installment: { number: n, due_date: shown.due_date, amount_due: shown.amount_due },
            }),
          ],
        };
      });
    },

    /**
     * Early settlement on the day of `paidAt`: one `payoff` transaction for the payoff amount of
     * that day (contract §12: pending rows at present value, overdue ones at their amount due),
     * every row paid, the loan finished with `loan.finished`. A retry answers the first amount.
     */
    async recordPayoff(input: {
      tenant: Tenant;
      loanId: string;
      paidAt: string;
      transactionId: string;
      eventId: string;
    }): Promise<{ amount: number }> {
      return write(input.tenant, async (tx) => {
        const before = await lockedLoan(tx, input.tenant, input.loanId);
        const { schedule, monthly_interest_rate: monthlyRate } = before.figures;
        const quote = payoffQuote(
          schedule.slice(before.paidInstallments),
          businessDate(new Date(input.paidAt)),
          String(monthlyRate),
          before.lateChargeRates,
        );
        const written = await insertLoanTransaction(tx, input.tenant, input.loanId, {
          id: input.transactionId,
          step: ledgerStep.payoff,
          type: 'payoff',
          amount: quote.payoffAmount,
          occurredAt: new Date(input.paidAt),
        });
        if (!written) {
          const first = await loanTransactionAmount(tx, input.loanId, ledgerStep.payoff);
          return { result: { amount: first ?? quote.payoffAmount }, events: [] };
        }
        if (before.status !== 'active')
          throw ApplicationFailure.nonRetryable(`the loan is ${before.status}`, 'invalid_state');
        const owed = repaymentOf(before).principal_outstanding;
        const principal = Math.min(owed, quote.payoffAmount);
        await postEntries(
          tx,
          input.tenant,
          written,
          bookedFor(
            before,
            paymentEntries({
              amount: quote.payoffAmount,
              principal,
              interest: quote.payoffAmount - principal,
              lateFee: 0,
              lateInterest: 0,
            }),
          ),
        );
        const settled = schedule.length - before.paidInstallments;
        await changeLoanRow(tx, input.loanId, {
          paidInstallments: schedule.length,
          paidDates: Array<string>(settled).fill(input.paidAt),
          status: 'finished',
        });
        const after = await lockedLoan(tx, input.tenant, input.loanId);
        return {
          result: { amount: quote.payoffAmount },
          events: [event(input.eventId, loanEventTypes.finished, after, input.paidAt)],
        };
      });
    },
  };
}

/**
 * A payment's outcome for the loan's workflow: its progress, whether it was a retry, and whether
 * it reached the loan's agreement (its deadline moved: the workflow reads it again).
 */
export type PaymentOutcome = RepaymentProgress & { repeated: boolean; agreementChanged?: boolean };

/**
 * The loan's `disbursement` transaction (its requested amount, at `at`, by whom); undefined when an
 * earlier attempt wrote it. The release's postings are the caller's: plain or refinancing.
 */
export function insertDisbursement(
  tx: Parameters<typeof insertLoanTransaction>[0],
  tenant: Tenant,
  loan: { id: string; figures: { requested_amount: number } },
  input: { at: string; transactionId: string } & Actors,
) {
  return insertLoanTransaction(tx, tenant, loan.id, {
    id: input.transactionId,
    step: ledgerStep.disbursement,
    type: 'disbursement',
    amount: loan.figures.requested_amount,
    actor: input.actor ?? null,
    approvedBy: input.approvedBy ?? null,
    occurredAt: new Date(input.at),
  });
}

/** What the loan's workflow keeps of a repayment: the paid rows at each end, finished or not. */
export function progressOf(repayment: Repayment): RepaymentProgress {
  const firstUnpaid = repayment.rows.findIndex((row) => !isPaid(row));
  const lastUnpaid = repayment.rows.findLastIndex((row) => !isPaid(row));
  return {
    paidInstallments: firstUnpaid === -1 ? repayment.rows.length : firstUnpaid,
    lastUnpaid: lastUnpaid + 1,
    finished: firstUnpaid === -1,
  };
}
