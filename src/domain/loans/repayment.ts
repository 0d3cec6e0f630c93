/**
 * What an unpaid installment owes on a given day, and what settling a loan early costs, as
 * contract §12 put it before §13 (`allocation.ts`): loans paid before §13 are read with it
 * (`legacy-repayment.ts`), and so are the Updates of their histories. Pure and deterministic — the API, the loan workflow and its activities all run it: integer
 * centavos in and out, decimals inside (`money.ts`: 40 digits, half-even), no binary float on an
 * amount. Dates are business dates (`YYYY-MM-DD`, America/Sao_Paulo).
 *
 * - Late: a row unpaid after its due date owes its installment, plus a late fee (a share of the
 *   installment, once) and late interest pro rata die (simple: monthly rate × days late ÷ 30, on
 *   the installment), each rounded half-even to the centavo.
 * - Early settlement: each pending row's installment discounted to the settlement date at the
 *   contract's monthly rate on calendar days, (1 + i)^(d/30), rounded half-even; a row already due
 *   counts at its amount due. No fee.
 */
import { addDays, daysBetween } from '../business-date.js';
import { Decimal, fromCentavos, toCentavos } from '../money.js';

/** The late-payment terms of a loan, as decimal text (LATE_FEE_RATE, LATE_INTEREST_MONTHLY_RATE). */
export interface LateChargeRates {
  /** e.g. '0.02': 2 % of the installment, once (the consumer-protection code's cap). */
  feeRate: string;
  /** e.g. '0.01': 1 % a month on the installment, pro rata die. */
  monthlyInterestRate: string;
}

/** An installment of the schedule, as the loan keeps it. */
export interface Installment {
  number: number;
  due_date: string;
  installment_amount: number;
}

export interface AmountDue {
  /** What the row owes on the day: installment + late fee + late interest. */
  amount: number;
  lateFee: number;
  lateInterest: number;
  /** Calendar days after the due date (0 on or before it). */
  daysLate: number;
}

/** What `row` owes if paid on `date`: its installment, plus the late charges once it is late. */
export function amountDue(row: Installment, date: string, rates: LateChargeRates): AmountDue {
  const daysLate = Math.max(0, daysBetween(row.due_date, date));
  if (daysLate === 0)
    return { amount: row.installment_amount, lateFee: 0, lateInterest: 0, daysLate };
  const installment = fromCentavos(row.installment_amount);
  const lateFee = toCentavos(installment.times(rates.feeRate));
  const lateInterest = toCentavos(
    installment.times(rates.monthlyInterestRate).times(daysLate).div(30),
  );
  return {
    amount: row.installment_amount + lateFee + lateInterest,
    lateFee,
    lateInterest,
    daysLate,
  };
}

/** `amount` due `days` calendar days after the valuation date, discounted at the monthly rate. */
export function presentValue(amount: number, monthlyRate: string, days: number): number {
  if (days <= 0) return amount;
  const factor = new Decimal(1).plus(monthlyRate).pow(new Decimal(days).div(30));
  return toCentavos(fromCentavos(amount).div(factor));
}

export interface PayoffQuote {
  date: string;
  /** What settles every unpaid row on `date`. */
  payoffAmount: number;
  /** The interest forgone: Σ amount due − Σ present value. */
  discountAmount: number;
  rows: { number: number; due_date: string; amount_due: number; present_value: number }[];
}

/**
 * Settling every unpaid row on `date`: a row due after `date` at its present value (its
 * installment discounted at the contract rate), a row due on or before it at its amount due then.
 */
export function payoffQuote(
  unpaid: readonly Installment[],
  date: string,
  monthlyRate: string,
  rates: LateChargeRates,
): PayoffQuote {
  const rows = unpaid.map((row) => {
    const days = daysBetween(date, row.due_date);
    const due = days > 0 ? row.installment_amount : amountDue(row, date, rates).amount;
    return {
      number: row.number,
      due_date: row.due_date,
      amount_due: due,
      present_value: presentValue(due, monthlyRate, days),
    };
  });
  const payoffAmount = rows.reduce((sum, row) => sum + row.present_value, 0);
  const owed = rows.reduce((sum, row) => sum + row.amount_due, 0);
  return { date, payoffAmount, discountAmount: owed - payoffAmount, rows };
}

/** The furthest ahead a payoff can be quoted (contract §12). */
export const PAYOFF_MAX_DAYS_AHEAD = 30;

/** The last date a payoff can be quoted for, seen from `today`. */
export const lastPayoffDate = (today: string): string => addDays(today, PAYOFF_MAX_DAYS_AHEAD);
