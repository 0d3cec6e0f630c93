/**
 * Payment agreements (acordos, contract §17): the debt of a late loan on the agreement's date, the
 * discount granted on it, the agreement's own rows, and what a broken agreement gives back. Pure
 * and deterministic — the API, the loan's activities and the tests run it: integer centavos at
 * the edges, decimals inside (`money.ts`), business dates (`YYYY-MM-DD`, São Paulo).
 *
 * - The debt on day t: with `rows: "overdue"`, the rows late on t, each at what is left of its
 *   installment plus its late charges; with `all`, also every other unpaid row at its present value
 *   on t (as a payoff values it). Its principal is the principal those rows carry: all the
 *   principal still owed for `all`; for `overdue`, what is left once the later rows (whose present
 *   value is the balance they carry, Price's own identity) took theirs. The rest of the rows' value
 *   is interest accrued; the late charges are apart.
 * - The discount: a percentage of the interest and late charges, or an amount up to them, never
 *   principal. It falls on the late interest first, then the late fee, then the interest.
 * - The agreed balance (debt − discount) is repaid in Price rows at the contract rate on calendar
 *   days from the agreement's date (§7's rounding, no IOF: nothing new is lent).
 * - The agreement's rows are a repayment of their own (`allocation.ts`): paid early, at present
 *   value; late, with late charges. The loan's covered rows stay as they were on the agreement's
 *   date (`renegotiated`: no charges accrue) so that a break can give them back: every payment made
 *   while the agreement lived is then allocated to them as §13 would have, on its own date
 *   (`restoreOnBreak`), which is what the borrower would owe without the agreement, less what they
 *   paid.
 */
import { addDays, daysBetween } from '../business-date.js';
import { priceSchedule, type ScheduleRow } from '../credit/simulation.js';
import { Decimal, fromCentavos, toCentavos } from '../money.js';
import {
  allocatePayment,
  isLate,
  isPaid,
  lateCharges,
  payoffAmount,
  rowValue,
  startRepayment,
  type ApplyTo,
  type Repayment,
  type RepaymentTerms,
} from './allocation.js';

export const agreementStatuses = [
  'pending_acceptance',
  'pending_entry',
  'active',
  'fulfilled',
  'lapsed',
  'broken',
] as const;
export type AgreementStatus = (typeof agreementStatuses)[number];

/** An agreement in these statuses is live: a loan has at most one (contract §17). */
export const liveAgreementStatuses: readonly AgreementStatus[] = [
  'pending_acceptance',
  'pending_entry',
  'active',
];

export const agreementEventTypes = {
  created: 'loan.agreement_created',
  accepted: 'loan.agreement_accepted',
  active: 'loan.agreement_active',
  lapsed: 'loan.agreement_lapsed',
  broken: 'loan.agreement_broken',
  fulfilled: 'loan.agreement_fulfilled',
} as const;

export type AgreementScope = 'overdue' | 'all';

/** The bounds of an agreement's terms (contract §17). */
export const AGREEMENT_MAX_INSTALLMENTS = 24;
/** The first row falls due at most this many days after the agreement's date. */
export const AGREEMENT_MAX_DAYS_TO_FIRST_DUE = 30;
/** A simulation can be turned into an agreement for this long (and on the day it was made). */
export const AGREEMENT_SIMULATION_TTL_MS = 24 * 3_600_000;

/** One row of the loan the agreement covers, valued on the agreement's date. */
export interface CoveredRow {
  number: number;
  due_date: string;
  /** `overdue`: late on the date (face value and late charges); `pending`: at present value. */
  status: 'overdue' | 'pending';
  /** What is left of its installment, face value. */
  installment_amount: number;
  late_fee_amount: number;
  late_interest_amount: number;
  /** What it counts for in the debt: its installment's value on the date plus its late charges. */
  value_amount: number;
}

/** The debt an agreement covers, split as the discount and the books need it. */
export interface AgreementDebt {
  date: string;
  scope: AgreementScope;
  rows: CoveredRow[];
  principal_amount: number;
  interest_amount: number;
  late_fee_amount: number;
  late_interest_amount: number;
  /** principal + interest + late fee + late interest: Σ rows' value. */
  debt_amount: number;
}

export type AgreementDiscount = { percentage: string } | { amount: number } | null;

export interface AgreementFigures extends AgreementDebt {
  discount_amount: number;
  /** What the discount took off each part (late interest first, then late fee, then interest). */
  discount: { late_interest_amount: number; late_fee_amount: number; interest_amount: number };
  /** debt − discount: what the agreement's rows repay. */
  agreed_amount: number;
  installments: number;
  first_due_date: string;
  monthly_interest_rate: string;
  schedule: ScheduleRow[];
  total_amount: number;
  total_interest_amount: number;
}

/** The agreement cannot be made as asked; `code` is the problem's (422 unless said). */
export class AgreementRefusal extends Error {
  constructor(
    readonly code:
      | 'nothing_overdue'
      | 'nothing_to_agree'
      | 'agreement_discount_above_charges'
      | 'invalid_first_due_date',
    message: string,
  ) {
    super(message);
  }
}

/** The debt of `repayment` on `date` that an agreement of `scope` covers. */
export function agreementDebt(
  repayment: Repayment,
  date: string,
  scope: AgreementScope,
  terms: RepaymentTerms,
): AgreementDebt {
  const unpaid = repayment.rows.filter((row) => !isPaid(row));
  const valued = unpaid.map((row): CoveredRow => {
    const charges = lateCharges(row, date, terms.lateCharges);
    const value = rowValue(row, date, terms);
    return {
      number: row.number,
      due_date: row.due_date,
      status: isLate(row, date) ? 'overdue' : 'pending',
      installment_amount: toCentavos(fromCentavos(row.installment_amount).minus(row.settled)),
      late_fee_amount: charges.lateFee,
      late_interest_amount: charges.lateInterest,
      value_amount: value,
    };
  });
  const worth = (rows: CoveredRow[]) =>
    rows.reduce(
      (sum, row) => sum + row.value_amount - row.late_fee_amount - row.late_interest_amount,
      0,
    );
  const covered = scope === 'all' ? valued : valued.filter((row) => row.status === 'overdue');
  if (covered.length === 0)
    throw scope === 'all'
      ? new AgreementRefusal('nothing_to_agree', 'The loan has no unpaid row.')
      : new AgreementRefusal('nothing_overdue', `The loan has no overdue row on ${date}.`);
  const owed = repayment.principal_outstanding;
  const coveredWorth = worth(covered);
  // The rows left out carry the balance their present value is (Price); the rest is covered.
  const leftOutWorth = worth(valued.filter((row) => !covered.includes(row)));
  const principal = Math.min(coveredWorth, owed - Math.min(owed, leftOutWorth));
  const lateFee = covered.reduce((sum, row) => sum + row.late_fee_amount, 0);
  const lateInterest = covered.reduce((sum, row) => sum + row.late_interest_amount, 0);
  // Every row's value can fall a centavo below the principal still owed (see `payoffAmount`):
  // the debt is never less than its principal.
  const interest = Math.max(0, coveredWorth - principal);
  return {
    date,
    scope,
    rows: covered,
    principal_amount: principal,
    interest_amount: interest,
    late_fee_amount: lateFee,
    late_interest_amount: lateInterest,
    debt_amount: principal + interest + lateFee + lateInterest,
  };
}

/** The discount asked, in centavos: a percentage (0–100) of the charges, or an amount up to them. */
export function discountOf(debt: AgreementDebt, discount: AgreementDiscount): number {
  const charges = debt.interest_amount + debt.late_fee_amount + debt.late_interest_amount;
  if (discount === null) return 0;
  if ('percentage' in discount)
    return toCentavos(fromCentavos(charges).times(discount.percentage).div(100));
  if (discount.amount > charges)
    throw new AgreementRefusal(
      'agreement_discount_above_charges',
      `A discount reaches only interest and late charges: at most ${charges} centavos here, never principal.`,
    );
  return discount.amount;
}

export interface AgreementRequest {
  /** The agreement's date: the customer's today. */
  date: string;
  scope: AgreementScope;
  discount: AgreementDiscount;
  installments: number;
  firstDueDate: string;
}

/** The last first-due-date an agreement of `date` accepts. */
export const lastFirstDueDate = (date: string): string =>
  addDays(date, AGREEMENT_MAX_DAYS_TO_FIRST_DUE);

/** An agreement as simulated on `request.date` over the loan's `repayment`. */
export function simulateAgreement(
  repayment: Repayment,
  request: AgreementRequest,
  terms: RepaymentTerms,
): AgreementFigures {
  const { date, firstDueDate, installments } = request;
  if (firstDueDate < date || firstDueDate > lastFirstDueDate(date))
    throw new AgreementRefusal(
      'invalid_first_due_date',
      `The first row falls due from ${date} to ${lastFirstDueDate(date)}.`,
    );
  if (!Number.isSafeInteger(installments) || installments < 1)
    throw new RangeError(`not a number of rows: ${installments}`);
  const debt = agreementDebt(repayment, date, request.scope, terms);
  const discount = discountOf(debt, request.discount);
  let rest = discount;
  const take = (amount: number) => {
    const part = Math.min(rest, amount);
    rest -= part;
    return part;
  };
  const parts = {
    late_interest_amount: take(debt.late_interest_amount),
    late_fee_amount: take(debt.late_fee_amount),
    interest_amount: take(debt.interest_amount),
  };
  const agreed = debt.debt_amount - discount;
  const schedule = priceSchedule(agreed, terms.monthlyRate, date, firstDueDate, installments);
  return {
    ...debt,
    discount_amount: discount,
    discount: parts,
    agreed_amount: agreed,
    installments,
    first_due_date: firstDueDate,
    monthly_interest_rate: terms.monthlyRate,
    schedule,
    total_amount: schedule.reduce((sum, row) => sum + row.installment_amount, 0),
    total_interest_amount: schedule.reduce((sum, row) => sum + row.interest_amount, 0),
  };
}

/** The agreement's own repayment: its rows, nothing paid, the agreed balance owed. */
export const agreementRepayment = (figures: AgreementFigures): Repayment =>
  startRepayment(figures.schedule, figures.agreed_amount);

/** A payment made while an agreement lived, as a break replays it. */
export interface LivedPayment {
  amount: number;
  /** Business date of `paidAt`. */
  date: string;
  paidAt: string;
  applyTo: ApplyTo;
}

/**
 * A broken agreement: the loan's rows as they stood when it was made (`before`), with every
 * payment made since allocated to them as §13 would have, each on its own date. Returns the rows,
 * what the payments paid of principal, interest and late charges, and the money above a payoff
 * (none in practice: a break finds rows unpaid), due back to the borrower as `excess`.
 */
export function restoreOnBreak(
  before: Repayment,
  payments: readonly LivedPayment[],
  terms: RepaymentTerms,
): {
  repayment: Repayment;
  principalPaid: number;
  interestPaid: number;
  lateFeePaid: number;
  lateInterestPaid: number;
  excess: number;
} {
  let repayment = before;
  const paid = { principalPaid: 0, interestPaid: 0, lateFeePaid: 0, lateInterestPaid: 0 };
  let excess = 0;
  for (const payment of payments) {
    const owed = repayment.rows.every(isPaid) ? 0 : payoffAmount(repayment, payment.date, terms);
    const applied = Math.min(payment.amount, owed);
    excess += payment.amount - applied;
    if (applied === 0) continue;
    const allocation = allocatePayment(repayment, { ...payment, amount: applied }, terms);
    repayment = allocation.after;
    paid.principalPaid += allocation.principal;
    paid.interestPaid += allocation.interest;
    paid.lateFeePaid += allocation.lateFee;
    paid.lateInterestPaid += allocation.lateInterest;
  }
  return { repayment, ...paid, excess };
}

/** The rows of `loan` the agreement does not cover, and the principal they carry. */
export function uncoveredPart(loan: Repayment, figures: AgreementFigures): Repayment {
  const covered = new Set(figures.rows.map((row) => row.number));
  return {
    rows: loan.rows.filter((row) => !covered.has(row.number)),
    principal_outstanding: loan.principal_outstanding - figures.principal_amount,
    last_paid_at: loan.last_paid_at,
  };
}

/** How many calendar days the agreement's oldest unpaid row is late on `date` (0: none). */
export function agreementDaysLate(agreement: Repayment, date: string): number {
  const oldest = agreement.rows.find((row) => !isPaid(row));
  return oldest ? Math.max(0, daysBetween(oldest.due_date, date)) : 0;
}

/** The agreement breaks once a row of it is overdue more than `breakDays` (AGREEMENT_BREAK_DAYS). */
export const breaksOn = (agreement: Repayment, breakDays: number): string | null => {
  const oldest = agreement.rows.find((row) => !isPaid(row));
  return oldest ? addDays(oldest.due_date, breakDays + 1) : null;
};

/** A percentage as the API takes it: 0 < p ≤ 100, at most 2 decimals; decimal text inside. */
export function parsePercentage(value: number): string | null {
  const text = new Decimal(value);
  if (text.lte(0) || text.gt(100) || text.decimalPlaces() > 2) return null;
  return text.toString();
}
