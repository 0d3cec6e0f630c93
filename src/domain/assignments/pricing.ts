/**
 * The price of loans sold (cessão, contract §19): per loan, the sum of its unpaid rows' present
 * values at the batch's monthly discount rate to the settlement date — calendar days,
 * (1 + r)^(d/30), each row rounded half-even to the centavo. Pure and deterministic: the API prices
 * a batch with it when it is submitted, settlement checks the rows again, and the tests run it.
 * A row due on or before the settlement date (late, or due that day) is priced at what is left of
 * it, undiscounted: its late charges are the borrower's debt but not part of the price.
 */
import { daysBetween } from '../business-date.js';
import { monthlyGrowth } from '../credit/compounding.js';
import { isPaid, type Repayment } from '../loans/allocation.js';
import { Decimal, fromCentavos, toCentavos } from '../money.js';

/** One installment sold: what is left of it (face, centavos) and its price on the settlement date. */
export interface SoldRow {
  number: number;
  due_date: string;
  /** What is left of the installment (face value, centavos). */
  amount: number;
  /** `amount` discounted to the settlement date (centavos, half-even). */
  present_value: number;
}

/** The discount rate's bounds: a monthly rate, 0 to 20 %, at most 6 decimals. */
export const DISCOUNT_RATE_PATTERN = /^0(\.\d{1,6})?$/;
export const MAX_DISCOUNT_RATE = '0.2';

export const isDiscountRate = (rate: string): boolean =>
  DISCOUNT_RATE_PATTERN.test(rate) && new Decimal(rate).lte(MAX_DISCOUNT_RATE);

/** A row's present value: `amount` / (1 + r)^(d/30), d the calendar days after `date` (≥ 0). */
export function presentValue(amount: number, rate: string, date: string, dueDate: string): number {
  const days = Math.max(0, daysBetween(date, dueDate));
  return toCentavos(fromCentavos(amount).div(monthlyGrowth(rate)(days)));
}

/** The loan's unpaid rows on the settlement date, each with its present value. */
export function soldRows(repayment: Repayment, rate: string, settlementDate: string): SoldRow[] {
  return repayment.rows
    .filter((row) => !isPaid(row))
    .map((row) => {
      // What is left of the installment (its paid part is kept exact), to the centavo.
      const amount = toCentavos(fromCentavos(row.installment_amount).minus(row.settled));
      return {
        number: row.number,
        due_date: row.due_date,
        amount,
        present_value: presentValue(amount, rate, settlementDate, row.due_date),
      };
    })
    .filter((row) => row.amount > 0);
}

/** The price of rows: the sum of their present values. */
export const priceOf = (rows: readonly Pick<SoldRow, 'present_value'>[]): number =>
  rows.reduce((sum, row) => sum + row.present_value, 0);
