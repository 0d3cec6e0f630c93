/**
 * The commands that send a loan's workflow an Update (contract §8, §12): cancel, sign, the
 * disbursement's outcome, a payment, a payoff; and the payoff quote. Each answers with the loan
 * as its workflow left it. Creation is `create-loan.ts`.
 */
import { createHash } from 'node:crypto';
import { findLoan, type LoanView } from '../db/queries/loans.js';
import type { Tenant } from '../domain/tenant.js';
import { ProblemError, problems } from '../errors.js';
import { changeLoan } from '../temporal/loan-workflows.js';
import {
  cancelUpdate,
  disbursementUpdate,
  paymentUpdate,
  payoffUpdate,
  signUpdate,
} from '../../workflows/loan/messages.js';
import { businessDate } from '../domain/business-date.js';
import {
  amountDue,
  lastPayoffDate,
  payoffQuote,
  type PayoffQuote,
} from '../domain/loans/repayment.js';

import { clockNow } from './customer-clock.js';

import { loanNotFound, type LoanDeps } from './loan-deps.js';

/** An Update id for a partner's command with an Idempotency-Key: retries find the first one. */
const commandId = (command: string, loan: LoanView, key: string) =>
  `${command}:${createHash('sha256').update(`${loan.partnerId}:${loan.environment}:${key}`).digest('hex')}`;

async function load(deps: LoanDeps, tenant: Tenant, loanId: string): Promise<LoanView> {
  const loan = await findLoan(deps.db, tenant, loanId);
  if (!loan) throw loanNotFound(loanId);
  return loan;
}

/** The loan as it stands after a command (read again: the workflow wrote it). */
const reload = (deps: LoanDeps, loan: LoanView) =>
  load(deps, { partnerId: loan.partnerId, environment: loan.environment }, loan.id);

export async function cancelLoan(
  deps: LoanDeps,
  tenant: Tenant,
  loanId: string,
  reason: string | undefined,
): Promise<LoanView> {
  const loan = await load(deps, tenant, loanId);
  await changeLoan(deps, loan, cancelUpdate, [{ reason: reason ?? null }]);
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

export async function reportDisbursement(
  deps: LoanDeps,
  loan: LoanView,
  report: { outcome: 'confirmed' | 'failed'; reason?: string | undefined },
): Promise<LoanView> {
  await changeLoan(deps, loan, disbursementUpdate, [
    {
      outcome: report.outcome,
      reason: report.reason ?? null,
      at: clockNow(loan, deps.clock()).toISOString(),
    },
  ]);
  return reload(deps, loan);
}

/**
 * A payment of the oldest unpaid installment. `amount` defaults to what that row owes on the
 * payment's day (the sandbox helper's convenience); `paid_at` defaults to now and
 * may not lie in the future.
 */
export async function recordPayment(
  deps: LoanDeps,
  loan: LoanView,
  payment: { amount?: number | undefined; paid_at?: string | undefined },
  idempotencyKey?: string,
): Promise<LoanView> {
  const paidAt = checkPaidAt(loan, payment.paid_at, clockNow(loan, deps.clock()));
  const row = loan.figures.schedule[loan.paidInstallments];
  const due = row && amountDue(row, businessDate(paidAt), loan.lateChargeRates).amount;
  await changeLoan(
    deps,
    loan,
    paymentUpdate,
    [{ amount: payment.amount ?? due ?? 0, paidAt: paidAt.toISOString() }],
    idempotencyKey && commandId('payment', loan, idempotencyKey),
  );
  return reload(deps, loan);
}

/**
 * Early settlement (contract §12): every unpaid row at once, for the payoff amount of the day of
 * `paid_at`, in one `payoff` transaction; the loan finishes.
 */
export async function settleLoan(
  deps: LoanDeps,
  loan: LoanView,
  request: { paid_at?: string | undefined },
  idempotencyKey?: string,
): Promise<LoanView> {
  const paidAt = checkPaidAt(loan, request.paid_at, clockNow(loan, deps.clock()));
  await changeLoan(
    deps,
    loan,
    payoffUpdate,
    [{ paidAt: paidAt.toISOString() }],
    idempotencyKey && commandId('payoff', loan, idempotencyKey),
  );
  return reload(deps, loan);
}

/**
 * The payoff quote of `date` (default today, São Paulo, at most 30 days ahead):
 * pending rows at present value, rows due by then at their amount due.
 */
export function quotePayoff(
  deps: Pick<LoanDeps, 'clock'>,
  loan: LoanView,
  date: string | undefined,
): PayoffQuote {
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
  const { schedule, monthly_interest_rate: monthlyRate } = loan.figures;
  return payoffQuote(
    schedule.slice(loan.paidInstallments),
    on,
    String(monthlyRate),
    loan.lateChargeRates,
  );
}

/**
 * A payment's `paid_at` (contract §13): now by default (the customer's clock in the sandbox);
 * never later than now, never before the disbursement, never before the loan's latest payment (a
 * payment backdated behind another would price rows on days already settled).
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
  const latest = loan.paidDates.at(-1);
  if (latest && paidAt.getTime() < new Date(latest).getTime())
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
