/**
 * Refinancing (contract §17): which loans a new loan may pay off, and whether its requested amount
 * covers them. Pure: the rules docs/decisions.md ("Refinancing: how it is built") states, which
 * `POST /v3/loans {refinances}` and its simulation check (src/commands/refinancing.ts) and the
 * release checks again under the loans' locks (activities/refinancing.ts).
 */
import { daysBetween } from '../business-date.js';
import type { RefinancedBalance } from '../credit/refinancing-iof.js';

/**
 * A refinancing's record (`loan_refinancings`): `pending` while the new loan is live, `released`
 * once its release paid the old loan off, `void` when the new loan ended before that.
 */
export const refinancingStatuses = ['pending', 'released', 'void'] as const;
export type RefinancingStatus = (typeof refinancingStatuses)[number];

/** At most this many loans are refinanced by one. */
export const MAX_REFINANCED_LOANS = 5;

/** Why a request's list of loans is refused before any loan is read (422). */
export type RefinancesProblem =
  | { code: 'too_many_refinanced_loans'; message: string }
  | { code: 'duplicate_refinanced_loan'; index: number; message: string };

/** The list itself: 1…MAX_REFINANCED_LOANS ids, each once. An empty list is no refinancing. */
export function refinancesProblems(ids: readonly string[]): RefinancesProblem[] {
  const problems: RefinancesProblem[] = [];
  if (ids.length > MAX_REFINANCED_LOANS)
    problems.push({
      code: 'too_many_refinanced_loans',
      message: `A loan refinances at most ${MAX_REFINANCED_LOANS} loans.`,
    });
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (seen.has(id))
      problems.push({
        code: 'duplicate_refinanced_loan',
        index,
        message: `Loan ${id} is listed twice.`,
      });
    seen.add(id);
  });
  return problems;
}

/** An old loan as the checks read it. */
export interface RefinancedLoan {
  id: string;
  customerId: string;
  status: string;
  writtenOffAt: Date | null;
  /** Another live loan (`awaiting_signatures` or `processing`) that names it, if any. */
  refinancedBy: string | null;
}

/** Why an old loan cannot be refinanced by a loan of `customerId`: HTTP status, code, message. */
export interface RefinancedLoanRefusal {
  status: 404 | 409;
  code:
    | 'loan_not_found'
    | 'refinanced_loan_not_active'
    | 'refinanced_loan_written_off'
    | 'loan_already_being_refinanced';
  message: string;
}

/**
 * The checks of one old loan: the same customer's (404 otherwise: another customer's loan is not
 * shown to exist), `active`, not written off (its principal left the book: an agreement or a
 * payment settles it, not a new credit), and not named by another live loan.
 */
export function refinancedLoanRefusal(
  loan: RefinancedLoan | undefined,
  id: string,
  customerId: string,
): RefinancedLoanRefusal | undefined {
  if (!loan || loan.customerId !== customerId)
    return { status: 404, code: 'loan_not_found', message: `No loan ${id} of this customer.` };
  if (loan.status !== 'active')
    return {
      status: 409,
      code: 'refinanced_loan_not_active',
      message: `Loan ${id} is ${loan.status}: only an active loan is refinanced.`,
    };
  if (loan.writtenOffAt)
    return {
      status: 409,
      code: 'refinanced_loan_written_off',
      message: `Loan ${id} was written off: it cannot be refinanced.`,
    };
  if (loan.refinancedBy)
    return {
      status: 409,
      code: 'loan_already_being_refinanced',
      message: `Loan ${id} is being refinanced by loan ${loan.refinancedBy}.`,
    };
  return undefined;
}

/** An old loan's payoff at the new loan's release date, and what its IOF covered. */
export interface RefinancedPayoff {
  loanId: string;
  /** Centavos: the payoff amount on the release date (`payoffQuote`). */
  payoffAmount: number;
  /** `YYYY-MM-DD`: the old loan's release. */
  releasedOn: string;
  /** T: see `iofPaidThroughDays`. */
  paidThroughDays: RefinancedBalance['paidThroughDays'];
}

/**
 * Whether `requestedAmount` covers the payoffs (422 `refinancing_not_covered` otherwise, naming
 * the total and each loan's), and the balances the IOF module prices, as of `releaseDate`. The
 * same check at the release refuses it (`refinanced_loan_changed`) when a payoff grew.
 */
export function refinancingCoverage(
  requestedAmount: number,
  releaseDate: string,
  payoffs: readonly RefinancedPayoff[],
):
  | { covered: true; balances: RefinancedBalance[]; newMoney: number }
  | { covered: false; payoffTotal: number; message: string } {
  const payoffTotal = payoffs.reduce((sum, payoff) => sum + payoff.payoffAmount, 0);
  if (payoffTotal > requestedAmount)
    return {
      covered: false,
      payoffTotal,
      message:
        `The requested amount ${requestedAmount} does not cover the payoff on ${releaseDate}: ` +
        `${payoffTotal} centavos (` +
        payoffs.map((payoff) => `${payoff.loanId} ${payoff.payoffAmount}`).join(', ') +
        ').',
    };
  return {
    covered: true,
    newMoney: requestedAmount - payoffTotal,
    balances: payoffs
      .filter((payoff) => payoff.payoffAmount > 0)
      .map((payoff) => ({
        amount: payoff.payoffAmount,
        elapsedDays: Math.max(0, daysBetween(payoff.releasedOn, releaseDate)),
        paidThroughDays: payoff.paidThroughDays,
      })),
  };
}

/**
 * The release's check of each old loan, read again under its lock (decisions, "Until
 * disbursement" and "Payoff above coverage"): still `active`, and its payoff on the release date
 * exactly what the signed CCB covers for it. Otherwise the release is refused and the new loan
 * cancelled with `cancellation_reason: "refinanced_loan_changed"` (the partner simulates again):
 * never a release that pays off a loan that no longer owes, nor one the CCB's figures do not
 * cover. A lower payoff (the borrower paid meanwhile) is refused too: the difference would be new
 * money priced as a refinanced balance, its IOF short of what the decree charges.
 */
export function refinancedLoanChanged(
  covered: { loanId: string; payoffAmount: number },
  now: { status: string; payoffAmount: number | null },
): string | undefined {
  if (now.status !== 'active' || now.payoffAmount === null)
    return `Loan ${covered.loanId} is ${now.status}: the refinancing no longer applies.`;
  if (now.payoffAmount !== covered.payoffAmount)
    return `Loan ${covered.loanId}'s payoff is ${now.payoffAmount} centavos on the release date, not the ${covered.payoffAmount} the contract covers.`;
  return undefined;
}
