/**
 * Where a loan's rows stand and how a payment of any amount is spread over them (contract §13).
 * Pure and deterministic — the API, the loan's activities and the tests all run it: integer
 * centavos in and out, decimals inside (`money.ts`), business dates (`YYYY-MM-DD`, São Paulo).
 *
 * - A row owes what is left of its installment, valued on its due date. A payment on day t values
 *   a row due after t at its present value at the contract rate on calendar days, (1 + i)^(d/30);
 *   a row due on or before t at face value, plus its late charges once it is late.
 * - Late: after the last day without charges (the due date, or the next business day when the due
 *   date is not one: Lei 7.089/1983). A late row owes a late fee, charged once on what was left of
 *   its installment, and late interest pro rata die on what is left, counted from the due date
 *   (from the latest payment's day once it was paid in part), each rounded half-even.
 * - Allocation: rows due by t, oldest first — late interest, then the late fee, then the
 *   installment; then the rows due later, oldest first (`next`) or newest first (`last`). A row the
 *   money does not cover is paid in part: what is left of it falls by the part carried to its due
 *   date. The carried value is kept exact and rounded once when shown, so two payments on one day
 *   owe exactly what one payment of their sum would.
 * - Principal and interest: interest accrues on the loan at the contract rate, so the cash paid
 *   to installments pays the interest accrued so far (what the rows are worth on t less the
 *   principal still owed), then principal. The payment that settles the last row pays all the
 *   principal left.
 */
import { lastDayWithoutCharges } from '../calendar/business-days.js';
import { monthlyGrowth } from '../credit/compounding.js';
import { daysBetween } from '../business-date.js';
import { Decimal, fromCentavos, toCentavos } from '../money.js';
import type { Installment, LateChargeRates } from './repayment.js';

/** One schedule row as its payments left it. */
export interface RowState {
  number: number;
  due_date: string;
  installment_amount: number;
  /**
   * How much of the installment is paid, valued on its due date, in exact decimal centavos
   * (text, so jsonb keeps every digit). Rounded only when shown.
   */
  settled: string;
  /** Cash this row has received: installment, late fee and late interest. */
  paid_amount: number;
  /** The late fee still owed, once charged (null: not charged, the row has not been paid late). */
  late_fee_due: number | null;
  /** Late interest accrued up to `late_interest_from` and not paid. */
  late_interest_due: number;
  /** Late interest on what is left counts from this date: the due date, then each late payment's. */
  late_interest_from: string;
  /** When the payment that settled the row was made (RFC 3339); null while anything is due. */
  paid_at: string | null;
}

/** A loan's repayment: its rows and the principal it still owes (the ledger's `loan_principal`). */
export interface Repayment {
  rows: RowState[];
  principal_outstanding: number;
  /** The latest payment's `paid_at` (RFC 3339): a later payment may not be dated before it. */
  last_paid_at: string | null;
}

/** The loan's terms that value its rows. */
export interface RepaymentTerms {
  /** The contract's monthly rate, decimal text (e.g. '0.0199'). */
  monthlyRate: string;
  lateCharges: LateChargeRates;
}

export type ApplyTo = 'next' | 'last';

/** What one payment paid of one row. */
export interface RowPart {
  number: number;
  late_interest: number;
  late_fee: number;
  /** Cash to the installment. */
  installment: number;
  /** The interest not charged because the installment was paid before its due date (CDC art. 52 §2). */
  discount: number;
}

export interface Allocation {
  rows: RowPart[];
  principal: number;
  interest: number;
  lateFee: number;
  lateInterest: number;
  discount: number;
  /** The repayment after the payment. */
  after: Repayment;
  /** Every row is paid: the loan is finished. */
  finished: boolean;
}

/** A new loan's repayment: nothing paid, the whole principal owed. */
export function startRepayment(
  schedule: readonly Installment[],
  principalAmount: number,
): Repayment {
  return {
    rows: schedule.map((row) => ({
      number: row.number,
      due_date: row.due_date,
      installment_amount: row.installment_amount,
      settled: '0',
      paid_amount: 0,
      late_fee_due: null,
      late_interest_due: 0,
      late_interest_from: row.due_date,
      paid_at: null,
    })),
    principal_outstanding: principalAmount,
    last_paid_at: null,
  };
}

export const isPaid = (row: RowState): boolean => row.paid_at !== null;

/** What is left of the installment, valued on its due date (exact). */
const left = (row: RowState): Decimal =>
  isPaid(row) ? new Decimal(0) : fromCentavos(row.installment_amount).minus(row.settled);

/** A row is late on `date` once its last day without charges has passed. */
export const isLate = (row: Pick<RowState, 'due_date'>, date: string): boolean =>
  date > lastDayWithoutCharges(row.due_date);

/**
 * The growth of money over `days` calendar days at the monthly rate: (1 + i)^(d/30), whole months
 * exactly (`monthlyGrowth`), each day count computed once per rate: a fractional power costs some
 * 0.2 ms at 40 digits, and a payment values every unpaid row.
 */
const growth = (monthlyRate: string, days: number): Decimal => monthlyGrowth(monthlyRate)(days);

/** A late row's charges on `date`: the fee (charged once) and the late interest accrued so far. */
export function lateCharges(
  row: RowState,
  date: string,
  rates: LateChargeRates,
): { lateFee: number; lateInterest: number } {
  if (isPaid(row) || !isLate(row, date)) return { lateFee: 0, lateInterest: 0 };
  const rest = left(row);
  const days = Math.max(0, daysBetween(row.late_interest_from, date));
  return {
    lateFee: row.late_fee_due ?? toCentavos(rest.times(rates.feeRate)),
    lateInterest:
      row.late_interest_due + toCentavos(rest.times(rates.monthlyInterestRate).times(days).div(30)),
  };
}

/** What the row's installment is worth on `date`: present value before its due date, else face. */
function installmentValue(row: RowState, date: string, monthlyRate: string): number {
  const days = daysBetween(date, row.due_date);
  const rest = left(row);
  return toCentavos(days > 0 ? rest.div(growth(monthlyRate, days)) : rest);
}

/** What settles the row on `date`: its installment's value plus its late charges. */
export function rowValue(row: RowState, date: string, terms: RepaymentTerms): number {
  const { lateFee, lateInterest } = lateCharges(row, date, terms.lateCharges);
  return installmentValue(row, date, terms.monthlyRate) + lateFee + lateInterest;
}

/**
 * The row's `amount_due` on `date`: what is left of its installment (face value) and, once late,
 * its late charges. A row due later than `date` is not discounted here; a payment is.
 */
export function rowAmountDue(row: RowState, date: string, rates: LateChargeRates): number {
  const { lateFee, lateInterest } = lateCharges(row, date, rates);
  return toCentavos(left(row)) + lateFee + lateInterest;
}

/**
 * What settles every row on `date` (contract §13: a payment above it is refused): each row's
 * value, but never less than the principal still owed and the late charges. The discount of an
 * early payment is interest not charged (CDC art. 52 §2), never principal; on the release day the
 * rows' present values, each rounded to the centavo, can sum a centavo or two below it.
 */
export function payoffAmount(repayment: Repayment, date: string, terms: RepaymentTerms): number {
  return valuation(repayment, date, terms).payoff;
}

/**
 * One pass over the rows on `date`: what their installments are worth, their late charges, and
 * the payoff those make (each installment's value costs a power at 40 digits: computed once).
 */
function valuation(repayment: Repayment, date: string, terms: RepaymentTerms) {
  let worth = 0;
  let charges = 0;
  for (const row of repayment.rows) {
    const { lateFee, lateInterest } = lateCharges(row, date, terms.lateCharges);
    worth += installmentValue(row, date, terms.monthlyRate);
    charges += lateFee + lateInterest;
  }
  return { worth, payoff: Math.max(worth, repayment.principal_outstanding) + charges };
}

/** What settles the loan on a date, row by row (`GET /v3/loans/{id}/payoff`). */
export interface PayoffQuote {
  date: string;
  payoffAmount: number;
  /** Σ amount due − payoff: the interest not charged for paying early (CDC art. 52 §2). */
  discountAmount: number;
  rows: { number: number; due_date: string; amount_due: number; present_value: number }[];
}

/** The payoff of `date`: each unpaid row's amount due and its value that day. */
export function quotePayoff(
  repayment: Repayment,
  date: string,
  terms: RepaymentTerms,
): PayoffQuote {
  let charges = 0;
  const rows = repayment.rows
    .filter((row) => !isPaid(row))
    .map((row) => {
      const { lateFee, lateInterest } = lateCharges(row, date, terms.lateCharges);
      charges += lateFee + lateInterest;
      return {
        number: row.number,
        due_date: row.due_date,
        amount_due: toCentavos(left(row)) + lateFee + lateInterest,
        present_value: installmentValue(row, date, terms.monthlyRate) + lateFee + lateInterest,
      };
    });
  const values = rows.reduce((sum, row) => sum + row.present_value, 0);
  const payoff = Math.max(values, repayment.principal_outstanding + charges);
  // The principal's floor (see `payoffAmount`) falls on the newest row, as a payment's does.
  const last = rows.at(-1);
  if (last) last.present_value += payoff - values;
  const due = rows.reduce((sum, row) => sum + row.amount_due, 0);
  return { date, payoffAmount: payoff, discountAmount: due - payoff, rows };
}

export class PaymentAboveBalanceError extends Error {
  constructor(readonly payoffAmount: number) {
    super(`The payoff amount is ${payoffAmount} centavos: a payment cannot exceed it.`);
  }
}

/**
 * Spreads a payment of `amount` centavos made on `date` (paid at the instant `paidAt`) over the
 * rows, in §13's order. Throws `PaymentAboveBalanceError` above the payoff amount of the day.
 */
export function allocatePayment(
  repayment: Repayment,
  payment: { amount: number; date: string; paidAt: string; applyTo: ApplyTo },
  terms: RepaymentTerms,
): Allocation {
  const { amount, date, paidAt } = payment;
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw new RangeError(`not a payment amount: ${amount}`);
  const { payoff: owed, worth: worthBefore } = valuation(repayment, date, terms);
  if (amount > owed) throw new PaymentAboveBalanceError(owed);

  const rows = repayment.rows.map((row) => ({ ...row }));
  const unpaid = rows.filter((row) => !isPaid(row));
  const due = unpaid.filter((row) => row.due_date <= date);
  const later = unpaid.filter((row) => row.due_date > date);
  const order = [...due, ...(payment.applyTo === 'last' ? later.reverse() : later)];

  let cash = amount;
  const parts: RowPart[] = [];
  for (const row of order) {
    if (cash === 0) break;
    const part: RowPart = {
      number: row.number,
      late_interest: 0,
      late_fee: 0,
      installment: 0,
      discount: 0,
    };
    if (isLate(row, date)) {
      const charges = lateCharges(row, date, terms.lateCharges);
      part.late_interest = Math.min(cash, charges.lateInterest);
      cash -= part.late_interest;
      row.late_interest_due = charges.lateInterest - part.late_interest;
      // What is left of the installment accrues from this payment on (nothing accrues twice).
      row.late_interest_from = date;
      part.late_fee = Math.min(cash, charges.lateFee);
      cash -= part.late_fee;
      row.late_fee_due = charges.lateFee - part.late_fee;
    }
    const rest = left(row);
    const worth = installmentValue(row, date, terms.monthlyRate);
    const days = Math.max(0, daysBetween(date, row.due_date));
    if (cash >= worth) {
      part.installment = worth;
      part.discount = toCentavos(rest) - worth;
      row.settled = String(row.installment_amount);
    } else if (cash > 0) {
      part.installment = cash;
      const carried = fromCentavos(cash).times(growth(terms.monthlyRate, days));
      part.discount = toCentavos(carried) - cash;
      row.settled = new Decimal(row.settled).plus(carried).toString();
    }
    cash -= part.installment;
    row.paid_amount += part.late_interest + part.late_fee + part.installment;
    if (part.installment === worth && row.late_interest_due === 0 && (row.late_fee_due ?? 0) === 0)
      row.paid_at = paidAt;
    parts.push(part);
  }
  // Money left once every row is paid is the principal's floor (see `payoffAmount`): the newest
  // rows' discounts give it back.
  for (const part of [...parts].sort((a, b) => b.number - a.number)) {
    const back = Math.min(cash, part.discount);
    part.installment += back;
    part.discount -= back;
    rows.find((row) => row.number === part.number)!.paid_amount += back;
    cash -= back;
  }
  if (cash !== 0) throw new Error(`${cash} centavos of a payment were not allocated`);
  // A row left owing less than half a centavo (an exact carried value's residue) is paid.
  for (const row of rows)
    if (
      !isPaid(row) &&
      toCentavos(left(row)) === 0 &&
      row.late_interest_due === 0 &&
      !row.late_fee_due
    ) {
      row.settled = String(row.installment_amount);
      row.paid_at = paidAt;
    }

  // The rows can be worth a centavo or so less than the principal still owed (see
  // `payoffAmount`): only the payoff amount finishes the loan, and a payment that pays every row
  // for less leaves the newest row it paid owing the shortfall, at face value.
  let finished = rows.every(isPaid);
  if (finished && amount < owed) {
    const shortfall = owed - amount;
    const newest = parts.reduce((a, b) => (b.number > a.number ? b : a));
    const row = rows.find((candidate) => candidate.number === newest.number)!;
    row.settled = String(row.installment_amount - shortfall);
    row.paid_at = null;
    newest.discount = Math.max(0, newest.discount - shortfall);
    finished = false;
  }
  const toInstallments = parts.reduce((sum, part) => sum + part.installment, 0);
  const principalBefore = repayment.principal_outstanding;
  const principal = finished
    ? principalBefore
    : toInstallments - Math.min(toInstallments, Math.max(0, worthBefore - principalBefore));
  return {
    rows: parts,
    principal,
    interest: toInstallments - principal,
    lateFee: parts.reduce((sum, part) => sum + part.late_fee, 0),
    lateInterest: parts.reduce((sum, part) => sum + part.late_interest, 0),
    discount: parts.reduce((sum, part) => sum + part.discount, 0),
    after: { rows, principal_outstanding: principalBefore - principal, last_paid_at: paidAt },
    finished,
  };
}
