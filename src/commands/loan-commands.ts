/**
 * The commands that send a loan's workflow an Update (contract §8, §12, §13): cancel, sign, the
 * disbursement's outcome, a payment of any amount, a payoff; and the payoff quote. Each answers
 * with the loan as its workflow left it. Creation is `create-loan.ts`.
 */
import type { Actors } from '../domain/operators.js';
import { createHash, randomBytes } from 'node:crypto';
import {
  findLoan,
  findPaymentByReference,
  repaymentOf,
  repaymentTerms,
  type LoanView,
} from '../db/queries/loans.js';
import { businessDate } from '../domain/business-date.js';
import {
  isPaid,
  payoffAmount,
  quotePayoff as payoffQuoteOf,
  type ApplyTo,
  type PayoffQuote,
  type Repayment,
} from '../domain/loans/allocation.js';
import { isSamePayment, type PaymentRequest } from '../domain/loans/payments.js';
import { lastPayoffDate } from '../domain/loans/repayment.js';
import type { Tenant } from '../domain/tenant.js';
import { ProblemError, problems } from '../errors.js';
import { payoutOfLoan } from '../db/queries/payouts.js';
import { payoutInFlight } from '../domain/payouts/payouts.js';
import type { Db } from '../db/client.js';
import { changeLoan } from '../temporal/loan-workflows.js';
import {
  cancelUpdate,
  claimDisbursementUpdate,
  disbursementUpdate,
  paymentUpdate,
  signUpdate,
} from '../../workflows/loan/messages.js';
import { clockNow } from './customer-clock.js';
import { agreementTakingPayments, chargeAmountOf, payoffWithAgreement } from './agreements.js';
import { partsUnderAgreement } from '../domain/loans/agreement-book.js';
import { loanNotFound, type LoanDeps } from './loan-deps.js';

/** What the commands that move money need: ops run them, and an approval's workflow runs them too. */
export type LoanCommandDeps = Pick<
  LoanDeps,
  'db' | 'temporal' | 'taskQueue' | 'clock' | 'sandboxDisbursementDelayMs'
>;

async function load(deps: LoanCommandDeps, tenant: Tenant, loanId: string): Promise<LoanView> {
  const loan = await findLoan(deps.db, tenant, loanId);
  if (!loan) throw loanNotFound(loanId);
  return loan;
}

/** The loan as it stands after a command (read again: the workflow wrote it). */
const reload = (deps: LoanCommandDeps, loan: LoanView) =>
  load(deps, { partnerId: loan.partnerId, environment: loan.environment }, loan.id);

export async function cancelLoan(
  deps: LoanDeps,
  tenant: Tenant,
  loanId: string,
  reason: string | undefined,
): Promise<LoanView> {
  const loan = await load(deps, tenant, loanId);
  if (loan.disbursementStatus === 'claimed')
    throw new ProblemError(
      'invalid_state',
      'The disbursement is under way; the loan can no longer be cancelled.',
    );
  await changeLoan(deps, loan, cancelUpdate, [{ reason: reason ?? null }]);
  return reload(deps, loan);
}

/**
 * Ops start sending the money (contract §13): `disbursement_status` becomes `claimed` and the
 * partner's cancel is refused from then on. Claiming again answers the loan as it is.
 */
export async function claimDisbursement(deps: LoanDeps, loan: LoanView): Promise<LoanView> {
  if (loan.disbursementStatus === 'claimed') return loan;
  await changeLoan(deps, loan, claimDisbursementUpdate, [{ loanId: loan.id }]);
  return reload(deps, loan);
}

export interface SignatureEvidence {
  ipAddress: string | null;
  userAgent: string | null;
  /** How the signer was identified: the masked channel of the code they entered, or `sandbox_api`. */
  channel: string;
}

/**
 * A signer signs: on the hosted page once a code sent to them proved who they are (the cpf is
 * the verified one, never a typed one), or through the sandbox helper.
 */
export async function signLoan(
  deps: LoanDeps,
  loan: LoanView,
  cpf: string,
  evidence: SignatureEvidence,
): Promise<LoanView> {
  await changeLoan(deps, loan, signUpdate, [
    {
      cpf,
      signedAt: deps.clock().toISOString(),
      ipAddress: evidence.ipAddress,
      userAgent: evidence.userAgent?.slice(0, 1000) ?? null,
      contractSha256: loan.contractSha256,
      channel: evidence.channel,
    },
  ]);
  return reload(deps, loan);
}

/**
 * A payout at the PSP carries out the loan's disbursement (contract §16): while it is `sending`
 * or `pending`, its outcome reports the disbursement, and a report by hand is refused (409
 * `invalid_state`) — over the ops API and in the back office alike.
 */
export async function refuseWhilePayoutInFlight(db: Db, loan: LoanView): Promise<void> {
  const payout = await payoutOfLoan(
    db,
    { partnerId: loan.partnerId, environment: loan.environment },
    loan.id,
  );
  if (payout && payoutInFlight(payout.status))
    throw new ProblemError(
      'invalid_state',
      `The loan's payout ${payout.id} is at the PSP (${payout.status}): its outcome confirms or fails the disbursement.`,
    );
}

export async function reportDisbursement(
  deps: LoanCommandDeps,
  loan: LoanView,
  report: {
    outcome: 'confirmed' | 'failed';
    reason?: string | undefined;
    /** When the money went out (RFC 3339); default now. An approval's is its maker's time. */
    at?: string | undefined;
  },
  actors: Actors = {},
): Promise<LoanView> {
  await changeLoan(deps, loan, disbursementUpdate, [
    {
      outcome: report.outcome,
      reason: report.reason ?? null,
      at: report.at ?? clockNow(loan, deps.clock()).toISOString(),
      ...definedActors(actors),
    },
  ]);
  return reload(deps, loan);
}

/** A payment command as the partner sent it (ops, or its sandbox twin with defaults). */
export interface PaymentCommand {
  /** Required from ops (the schema says so); the sandbox twin makes one when none is sent. */
  reference?: string | undefined;
  /** Centavos; default what the oldest unpaid row owes on the day of `paid_at` (sandbox only). */
  amount?: number | undefined;
  paid_at?: string | undefined;
  apply_to?: ApplyTo | undefined;
}

/**
 * A payment of any amount (contract §13), allocated over the rows by the loan's workflow. Its
 * reference names it for good: recorded already, the same payment answers the loan as it stands
 * (whatever the loan's state since) and anything else is 409 `payment_reference_conflict`. Then:
 * only while `active`; `paid_at` not in the future nor before the latest payment; the amount not
 * above the payoff amount of its day (422 naming it).
 */
export function recordPayment(
  deps: LoanCommandDeps,
  loan: LoanView,
  command: PaymentCommand,
  actors: Actors = {},
): Promise<LoanView> {
  return pay(deps, loan, command, command.amount, actors);
}

/** Early settlement: a payment of the payoff amount of the day of `paid_at`; the loan finishes. */
export function settleLoan(
  deps: LoanCommandDeps,
  loan: LoanView,
  command: Pick<PaymentCommand, 'reference' | 'paid_at'>,
  actors: Actors = {},
): Promise<LoanView> {
  return pay(deps, loan, command, 'payoff', actors);
}

/** The actors that are set, and no key for one that is not (a workflow's input stays as it was). */
const definedActors = (actors: Actors): Actors => ({
  ...(actors.actor ? { actor: actors.actor } : {}),
  ...(actors.approvedBy ? { approvedBy: actors.approvedBy } : {}),
});

/**
 * A payment's request as it will run, once its checks pass; `recorded` when the same payment is
 * recorded already (anything else under its reference is 409 `payment_reference_conflict`).
 */
async function preparePayment(
  deps: LoanCommandDeps,
  loan: LoanView,
  command: PaymentCommand,
  amount: number | 'payoff' | undefined,
): Promise<PaymentRequest | 'recorded'> {
  const reference = command.reference ?? `sbx_${randomBytes(12).toString('hex')}`;
  const now = clockNow(loan, deps.clock());
  const request = {
    reference,
    paidAt: command.paid_at ?? now.toISOString(),
    applyTo: command.apply_to ?? 'next',
    stated: { amount: amount !== undefined, paidAt: command.paid_at !== undefined },
  };
  const recorded = await findPaymentByReference(deps.db, loan.id, reference, 'manual');
  if (recorded) {
    if (!isSamePayment(recorded, { ...request, amount: amount ?? 0 }))
      throw new ProblemError(
        'payment_reference_conflict',
        `Payment ${reference} was recorded on this loan with ${recorded.amount} centavos paid at ${recorded.occurredAt.toISOString()}.`,
      );
    return 'recorded';
  }
  if (loan.status !== 'active')
    throw new ProblemError('invalid_state', `The loan is ${loan.status}, not active.`);
  const paidAt = checkPaidAt(loan, command.paid_at, now);
  const payment: PaymentRequest = {
    ...request,
    // The sandbox twin's default: what pays the oldest unpaid row in full that day.
    amount: amount ?? (await nextAmountOf(deps, loan, businessDate(paidAt))),
  };
  if (payment.amount !== 'payoff')
    await checkAmount(deps, loan, payment.amount, businessDate(paidAt));
  return payment;
}

/** What pays the oldest unpaid row in full on `date`: the agreement's first while one takes payments. */
async function nextAmountOf(deps: LoanCommandDeps, loan: LoanView, date: string): Promise<number> {
  const priced = await chargeAmountOf(deps.db, loan, 'next', date);
  return priced.ok ? priced.amount : 0;
}

/**
 * The checks a payment (or payoff) passes before it runs: what a maker's request is held to.
 * `recorded`: the same payment is recorded already, and answering it moves nothing.
 */
export async function checkPayment(
  deps: LoanCommandDeps,
  loan: LoanView,
  command: PaymentCommand,
  kind: 'payment' | 'payoff',
): Promise<'recorded' | 'new'> {
  const prepared = await preparePayment(
    deps,
    loan,
    command,
    kind === 'payoff' ? 'payoff' : command.amount,
  );
  return prepared === 'recorded' ? 'recorded' : 'new';
}

async function pay(
  deps: LoanCommandDeps,
  loan: LoanView,
  command: PaymentCommand,
  amount: number | 'payoff' | undefined,
  actors: Actors,
): Promise<LoanView> {
  const prepared = await preparePayment(deps, loan, command, amount);
  if (prepared === 'recorded') return reload(deps, loan);
  const payment: PaymentRequest = { ...prepared, ...definedActors(actors) };
  try {
    await changeLoan(deps, loan, paymentUpdate, [payment], paymentUpdateId(loan, payment));
  } catch (error) {
    if (!(error instanceof ProblemError && error.code === 'invalid_state')) throw error;
    // A retry that raced its first try (after a lost answer or a 503): the first recorded the
    // payment after the check above and finished the loan, so the workflow refuses the retry's
    // update as a loan no longer active. The reference says it is the same payment: answer it.
    const raced = await findPaymentByReference(deps.db, loan.id, payment.reference, 'manual');
    if (raced && isSamePayment(raced, payment)) return reload(deps, loan);
    // The record is active but the workflow is not yet: a new worker took the Update in the same
    // task as the result of the activity that made the loan active, and the SDK hands a task's
    // Updates to the workflow before its activities' results. The workflow catches up at once.
    if ((await reload(deps, loan)).status === 'active')
      throw problems.serviceUnavailable(
        'The loan’s workflow is catching up with its last change; retry shortly.',
      );
    throw error;
  }
  return reload(deps, loan);
}

/**
 * The payment's Update id: a retry in the same run finds the first one's outcome. Everything the
 * payment says is in it, so another payment under the same reference runs and is refused.
 */
const paymentUpdateId = (loan: LoanView, payment: PaymentRequest) =>
  `payment:${createHash('sha256')
    .update(
      JSON.stringify([
        loan.id,
        payment.reference,
        payment.amount,
        // A default date is the workflow's to set: a retry of the same request is the same Update.
        payment.stated.paidAt ? payment.paidAt : null,
        payment.applyTo,
      ]),
    )
    .digest('hex')}`;

/**
 * A payment is at most the payoff amount of its day (contract §13): with a payment agreement
 * taking payments, what settles its rows and the uncovered ones (contract §17).
 */
async function checkAmount(
  deps: LoanCommandDeps,
  loan: LoanView,
  amount: number,
  date: string,
): Promise<void> {
  const payoff =
    (await payoffWithAgreement(deps.db, loan, date)) ??
    payoffAmount(repaymentOf(loan), date, repaymentTerms(loan));
  if (amount > payoff)
    throw problems.validation([
      {
        path: 'body.amount',
        code: 'above_payoff_amount',
        message: `The payoff amount on ${date} is ${payoff} centavos; a payment cannot exceed it.`,
      },
    ]);
}

/**
 * The payoff quote of `date` (default today, São Paulo, at most 30 days ahead): pending rows at
 * present value, rows due by then at their amount due. While an agreement takes payments (contract
 * §17) the covered rows are the agreement's: its own rows are quoted apart (`agreement`), the loan's
 * rows are those it does not cover, and the payoff settles both.
 */
export async function quotePayoff(
  deps: Pick<LoanDeps, 'clock' | 'db'>,
  loan: LoanView,
  date: string | undefined,
): Promise<LoanPayoffQuote> {
  if (loan.status !== 'active')
    throw new ProblemError(
      'invalid_state',
      `The loan is ${loan.status}; only an active loan has a payoff.`,
    );
  const today = businessDate(clockNow(loan, deps.clock()));
  const on = date ?? today;
  const last = lastPayoffDate(today);
  if (on < today || on > last)
    throw problems.validation([
      {
        path: 'query.date',
        code: 'out_of_range',
        message: `Must be between today (${today}) and ${last}.`,
      },
    ]);
  const terms = repaymentTerms(loan);
  const taking = await agreementTakingPayments(deps.db, loan);
  if (!taking) return { ...payoffQuoteOf(repaymentOf(loan), on, terms), agreement: null };
  const parts = partsUnderAgreement(taking.repayment, taking.figures, taking.book);
  const quoteOf = (part: Repayment) =>
    part.rows.every(isPaid)
      ? { payoffAmount: 0, discountAmount: 0, rows: [] }
      : payoffQuoteOf(part, on, terms);
  const own = quoteOf(parts.loan);
  const agreed = quoteOf(parts.agreement);
  return {
    date: on,
    payoffAmount: own.payoffAmount + agreed.payoffAmount,
    discountAmount: own.discountAmount + agreed.discountAmount,
    rows: own.rows,
    agreement: { id: taking.agreementId, payoffAmount: agreed.payoffAmount, rows: agreed.rows },
  };
}

/** A loan's payoff quote: its rows, and its agreement's while one takes payments. */
export interface LoanPayoffQuote extends PayoffQuote {
  agreement: { id: string; payoffAmount: number; rows: PayoffQuote['rows'] } | null;
}

/**
 * A payment's `paid_at` (contract §13): now by default (the customer's clock in the sandbox), and
 * then the workflow dates it again when it books it (so a burst of payments books every one, in
 * order); never later than now, never before the disbursement, a stated one never before the
 * loan's latest payment (a payment backdated behind another would price rows on days already
 * settled).
 */
function checkPaidAt(loan: LoanView, paidAtText: string | undefined, now: Date): Date {
  const paidAt = paidAtText ? new Date(paidAtText) : now;
  if (paidAt.getTime() > now.getTime())
    throw problems.validation([
      {
        path: 'body.paid_at',
        code: 'in_the_future',
        message: 'A payment cannot be dated later than now.',
      },
    ]);
  if (loan.status !== 'active')
    throw new ProblemError('invalid_state', `The loan is ${loan.status}; it takes no payments.`);
  if (loan.disbursedAt && paidAt.getTime() < loan.disbursedAt.getTime())
    throw problems.validation([
      {
        path: 'body.paid_at',
        code: 'before_disbursement',
        message: `A payment cannot be dated before the disbursement (${loan.disbursedAt.toISOString()}).`,
      },
    ]);
  // A payment without `paid_at` is dated when the loan's workflow books it, after every payment
  // ahead of it: only a stated date can fall behind the latest payment.
  const latest = repaymentOf(loan).last_paid_at;
  if (paidAtText && latest && paidAt.getTime() < new Date(latest).getTime())
    throw problems.validation([
      {
        path: 'body.paid_at',
        code: 'before_latest_payment',
        message: `A payment cannot be dated before the loan's latest payment (${latest}).`,
      },
    ]);
  return paidAt;
}

/** pdf-lib and its fonts (some 20 MB resident) load with the first contract, not at startup. */
