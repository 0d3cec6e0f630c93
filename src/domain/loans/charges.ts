/**
 * Pix charges (contract §14): what a charge asks for, until when, and the withdrawal right. Pure —
 * the API checks a request with these before the loan's workflow writes the charge with them.
 *
 * A charge's amount is fixed for its life, and what a row owes changes every day (a pending row's
 * present value grows towards its due date, an overdue row's late interest accrues): so a charge
 * for rows (`next`, `overdue`, `payoff`) lasts until the end of the day it was made at most. A
 * charge of a stated `amount` depends on no row and may last longer; a `withdrawal` lasts until
 * its window closes.
 */
import { addDays, businessDate, startOfBusinessDate } from '../business-date.js';
import type { LedgerAccount } from '../ledger/postings.js';
import {
  isLate,
  isPaid,
  payoffAmount,
  rowValue,
  type Repayment,
  type RepaymentTerms,
} from './allocation.js';

export const chargeScopes = ['next', 'overdue', 'payoff', 'amount', 'withdrawal'] as const;
export type ChargeScope = (typeof chargeScopes)[number];

/** The scopes a partner asks for with `POST /v3/loans/{id}/charges`. */
export const requestableChargeScopes = ['next', 'overdue', 'payoff', 'amount'] as const;

export const chargeStatuses = ['active', 'paid', 'expired', 'cancelled'] as const;
export type ChargeStatus = (typeof chargeStatuses)[number];

export const chargeEventTypes = {
  created: 'charge.created',
  paid: 'charge.paid',
  expired: 'charge.expired',
  cancelled: 'charge.cancelled',
} as const;

/** The longest a charge of a stated amount lasts. */
export const MAX_AMOUNT_CHARGE_DAYS = 30;

/** The withdrawal right's length (CDC art. 49): 7 calendar days from the disbursement's. */
export const WITHDRAWAL_DAYS = 7;

/**
 * What the oldest unpaid row owes on `date`: its value (present value before its due date, face
 * value and late charges after). The last row owes the payoff amount (never less than the
 * principal still owed). Paying it pays that row in full, whatever is overdue before it: the
 * allocation takes the oldest rows first.
 */
export function nextAmountDue(repayment: Repayment, date: string, terms: RepaymentTerms): number {
  const unpaid = repayment.rows.filter((row) => !isPaid(row));
  if (unpaid.length === 1) return payoffAmount(repayment, date, terms);
  return unpaid[0] ? rowValue(unpaid[0], date, terms) : 0;
}

/** What the rows late on `date` owe that day, late charges included (0: nothing is overdue). */
export function overdueAmountDue(
  repayment: Repayment,
  date: string,
  terms: RepaymentTerms,
): number {
  const late = repayment.rows.filter((row) => !isPaid(row) && isLate(row, date));
  // All of them late and unpaid: the payoff (its principal floor included) settles them.
  if (late.length === repayment.rows.filter((row) => !isPaid(row)).length && late.length > 0)
    return payoffAmount(repayment, date, terms);
  return late.reduce((sum, row) => sum + rowValue(row, date, terms), 0);
}

export type ChargeAmount =
  | { ok: true; amount: number }
  | { ok: false; code: 'nothing_overdue' | 'above_payoff_amount'; message: string };

/** What the loan owes on a date, as a charge's scopes ask for it. */
interface Owed {
  next(): number;
  overdue(): number;
  payoff(): number;
}

export function chargeAmount(
  scope: Exclude<ChargeScope, 'withdrawal'>,
  repayment: Repayment,
  date: string,
  terms: RepaymentTerms,
  stated?: number,
): ChargeAmount {
  return priced(scope, date, stated, {
    next: () => nextAmountDue(repayment, date, terms),
    overdue: () => overdueAmountDue(repayment, date, terms),
    payoff: () => payoffAmount(repayment, date, terms),
  });
}

/**
 * A charge's amount while a payment agreement takes payments (contract §17): a payment reaches the
 * agreement's rows first and then the loan's rows it does not cover, each part valued on its own
 * (its own principal floor), as the agreement's book allocates and its payoff adds them.
 */
export function chargeAmountUnderAgreement(
  scope: Exclude<ChargeScope, 'withdrawal'>,
  parts: { agreement: Repayment; loan: Repayment },
  date: string,
  terms: RepaymentTerms,
  stated?: number,
): ChargeAmount {
  const owing = (part: Repayment) =>
    part.rows.every(isPaid) ? 0 : payoffAmount(part, date, terms);
  const owingOverdue = (part: Repayment) =>
    part.rows.every(isPaid) ? 0 : overdueAmountDue(part, date, terms);
  return priced(scope, date, stated, {
    next: () =>
      parts.agreement.rows.every(isPaid)
        ? nextAmountDue(parts.loan, date, terms)
        : nextAmountDue(parts.agreement, date, terms),
    overdue: () => owingOverdue(parts.agreement) + owingOverdue(parts.loan),
    payoff: () => owing(parts.agreement) + owing(parts.loan),
  });
}

function priced(
  scope: Exclude<ChargeScope, 'withdrawal'>,
  date: string,
  stated: number | undefined,
  owed: Owed,
): ChargeAmount {
  switch (scope) {
    case 'next':
      return { ok: true, amount: owed.next() };
    case 'payoff':
      return { ok: true, amount: owed.payoff() };
    case 'overdue': {
      const amount = owed.overdue();
      return amount > 0
        ? { ok: true, amount }
        : { ok: false, code: 'nothing_overdue', message: `No installment is overdue on ${date}.` };
    }
    case 'amount': {
      const payoff = owed.payoff();
      if (stated === undefined || stated > payoff)
        return {
          ok: false,
          code: 'above_payoff_amount',
          message: `The payoff amount on ${date} is ${payoff} centavos; a charge cannot ask for more.`,
        };
      return { ok: true, amount: stated };
    }
  }
}

export type ChargeExpiry = { ok: true; expiresAt: Date } | { ok: false; message: string };

/**
 * When a charge made at `now` (the customer's clock) expires: `requested` if given and allowed,
 * else the end of the day (São Paulo). A charge for rows lasts until the end of the day at most;
 * one of a stated amount up to `MAX_AMOUNT_CHARGE_DAYS` days. Never in the past.
 */
export function chargeExpiry(
  scope: Exclude<ChargeScope, 'withdrawal'>,
  now: Date,
  requested?: Date,
): ChargeExpiry {
  const today = businessDate(now);
  const endOfDay = new Date(startOfBusinessDate(addDays(today, 1)));
  const latest =
    scope === 'amount'
      ? new Date(startOfBusinessDate(addDays(today, MAX_AMOUNT_CHARGE_DAYS + 1)))
      : endOfDay;
  if (requested === undefined) return { ok: true, expiresAt: endOfDay };
  if (requested.getTime() <= now.getTime())
    return { ok: false, message: `expires_at must be after now (${now.toISOString()}).` };
  if (requested.getTime() > latest.getTime())
    return {
      ok: false,
      message:
        scope === 'amount'
          ? `A charge of a stated amount lasts ${MAX_AMOUNT_CHARGE_DAYS} days at most: until ${latest.toISOString()}.`
          : `What the rows owe changes tomorrow: a ${scope} charge lasts until ${latest.toISOString()} at most.`,
    };
  return { ok: true, expiresAt: requested };
}

/**
 * When the withdrawal right of a loan disbursed at `disbursedAt` ends: 7 calendar days counted
 * from the day after the disbursement's (CDC art. 49; São Paulo), so at the end of the 7th.
 */
export function withdrawalWindowEnds(disbursedAt: Date): Date {
  return new Date(startOfBusinessDate(addDays(businessDate(disbursedAt), WITHDRAWAL_DAYS + 1)));
}

/**
 * What a withdrawal costs: the amount released, less what the borrower has paid towards the loan
 * (every part of every payment: a withdrawn loan charges no interest nor late charges, so they
 * count as money returned), read off the loan's account balances (debits − credits). 0 or less:
 * nothing more to return.
 */
export function withdrawalDue(
  figures: { requested_amount: number; principal_amount: number },
  balances: Partial<Record<LedgerAccount, number>>,
): number {
  const principalPaid =
    figures.principal_amount - (balances.loan_principal ?? figures.principal_amount);
  const chargesPaid = -(
    (balances.interest_income ?? 0) +
    (balances.late_fee_income ?? 0) +
    (balances.late_interest_income ?? 0)
  );
  return figures.requested_amount - principalPaid - chargesPaid;
}

/** What a charge request asks for (contract §14); checked by the API, again here under the lock. */
export interface ChargeRequest {
  /** Made by the API, so a retried request finds the charge its first attempt wrote. */
  chargeId: string;
  scope: ChargeScope;
  /** Centavos, for scope `amount`. */
  amount?: number;
  /** RFC 3339; default the end of the day (a withdrawal: the end of its window). */
  expiresAt?: string;
}

/**
 * Why a loan cannot be withdrawn from at `now`, if it cannot (CDC art. 49 covers consumers: a
 * customer without a cnpj, within 7 days of the disbursement).
 */
export function withdrawalRefusal(
  loan: { status: string; disbursedAt: Date | null },
  hasCnpj: boolean,
  now: Date,
): string | null {
  if (hasCnpj)
    return 'The right of withdrawal (CDC art. 49) is a consumer’s: this customer has a cnpj.';
  if (!loan.disbursedAt) return `The loan is ${loan.status}; nothing was released to return.`;
  const ends = withdrawalWindowEnds(loan.disbursedAt);
  if (now.getTime() >= ends.getTime())
    return `The withdrawal window (7 days from the disbursement) ended at ${ends.toISOString()}.`;
  return null;
}
