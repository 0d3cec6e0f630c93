/**
 * A loan as it stood at the end of a month (the SCR's data-base), rebuilt from its schedule and
 * the payments booked up to that day: each payment's recorded parts (what it paid of each row,
 * contract §13) are laid on the rows again in the order they were made, so the month-end state
 * does not depend on the loan's current one. Then each unpaid row's balance that day: its
 * present value at the contract rate when due later, face value and late charges once due — the
 * payoff of that day, row by row (`quotePayoff`), which sums to what the borrower owes.
 * Pure: integer centavos at the edges, decimals inside, business dates (São Paulo).
 */
import { daysBetween } from '../business-date.js';
import { monthlyGrowth } from '../credit/compounding.js';
import { Decimal, fromCentavos, toCentavos } from '../money.js';
import {
  isLate,
  isPaid,
  lateCharges,
  payoffAmount,
  quotePayoff,
  startRepayment,
  type RepaymentTerms,
  type Repayment,
  type RowPart,
  type RowState,
} from '../loans/allocation.js';
import type { Installment } from '../loans/repayment.js';

/** A payment booked on a loan, as its ledger transaction records it. */
export interface BookedPayment {
  /** The business date it was made (São Paulo). */
  date: string;
  /** `payment`: what it paid of each row (`parts`; null before §13: `installmentNumber` in full). */
  type: 'payment' | 'payoff';
  parts: readonly RowPart[] | null;
  installmentNumber: number | null;
  /** The principal it paid (null before §13: the schedule's principal of the rows it paid). */
  principal: number | null;
}

export interface LoanBook {
  schedule: readonly (Installment & { principal_amount: number })[];
  principalAmount: number;
  terms: RepaymentTerms;
  /** Its payments, any order; only those made on or before the day count. */
  payments: readonly BookedPayment[];
}

/** A row still owing at the month's end, and its balance that day (centavos, > 0). */
export interface OwedRow {
  number: number;
  dueDate: string;
  owed: number;
}

/** The repayment on `date` (end of day): the payments made by then laid on the rows in order. */
export function repaymentOn(book: LoanBook, date: string): Repayment {
  const repayment = startRepayment(book.schedule, book.principalAmount);
  const rows = new Map(repayment.rows.map((row) => [row.number, row]));
  const payments = book.payments
    .map((payment, index) => ({ payment, index }))
    .filter(({ payment }) => payment.date <= date)
    // Stable: two payments of one day keep their booking order.
    .sort((a, b) => a.payment.date.localeCompare(b.payment.date) || a.index - b.index)
    .map(({ payment }) => payment);
  let principalPaid = 0;
  for (const payment of payments) {
    const paidRows =
      payment.type === 'payoff'
        ? book.schedule.filter((row) => !isPaid(rows.get(row.number)!))
        : payment.parts === null
          ? book.schedule.filter((row) => row.number === payment.installmentNumber)
          : [];
    for (const scheduled of paidRows) {
      const row = rows.get(scheduled.number)!;
      row.settled = String(row.installment_amount);
      row.paid_amount = row.installment_amount;
      row.paid_at = `${payment.date}T12:00:00Z`;
    }
    principalPaid +=
      payment.principal ?? paidRows.reduce((sum, row) => sum + row.principal_amount, 0);
    if (payment.type === 'payment' && payment.parts !== null && payment.parts.length > 0) {
      // What settled every row that day: a payment of all the rows for less leaves the newest
      // row it paid owing the difference (`allocatePayment`'s principal floor).
      const owedBefore = payoffAmount(
        {
          rows: [...rows.values()],
          principal_outstanding: book.principalAmount - principalPaid + (payment.principal ?? 0),
          last_paid_at: null,
        },
        payment.date,
        book.terms,
      );
      let cash = 0;
      for (const part of payment.parts) {
        cash += part.late_interest + part.late_fee + part.installment;
        layPart(rows, part, payment.date, book.terms);
      }
      if (cash < owedBefore && [...rows.values()].every(isPaid)) {
        const newest = Math.max(...payment.parts.map((part) => part.number));
        const row = rows.get(newest)!;
        row.settled = String(row.installment_amount - (owedBefore - cash));
        row.paid_at = null;
      }
    }
  }
  return {
    rows: [...rows.values()],
    principal_outstanding: Math.max(0, book.principalAmount - principalPaid),
    last_paid_at: null,
  };
}

/** One payment's part laid on its row, as `allocatePayment` left the row (exact decimals). */
function layPart(
  rows: Map<number, RowState>,
  part: RowPart,
  date: string,
  terms: RepaymentTerms,
): void {
  const row = rows.get(part.number);
  if (!row) throw new Error(`a payment paid row ${part.number}, which the schedule lacks`);
  if (isLate(row, date)) {
    const charges = lateCharges(row, date, terms.lateCharges);
    row.late_interest_due = Math.max(0, charges.lateInterest - part.late_interest);
    row.late_interest_from = date;
    row.late_fee_due = Math.max(0, charges.lateFee - part.late_fee);
  }
  // A row paid at its worth that day is settled; cash short of it is carried to the due date
  // exactly, (1 + i)^(d/30), as the allocation keeps it.
  const rest = fromCentavos(row.installment_amount).minus(row.settled);
  const days = Math.max(0, daysBetween(date, row.due_date));
  const growth = monthlyGrowth(terms.monthlyRate)(days);
  const worth = toCentavos(days > 0 ? rest.div(growth) : rest);
  if (part.installment >= worth) row.settled = String(row.installment_amount);
  else if (part.installment > 0)
    row.settled = new Decimal(row.settled)
      .plus(fromCentavos(part.installment).times(growth))
      .toString();
  row.paid_amount += part.late_interest + part.late_fee + part.installment;
  const left = fromCentavos(row.installment_amount).minus(row.settled);
  if (toCentavos(left) <= 0 && row.late_interest_due === 0 && !row.late_fee_due) {
    row.settled = String(row.installment_amount);
    row.paid_at = `${date}T12:00:00Z`;
  }
}

/**
 * Each row still owing at the end of `date`, with its balance that day: Σ is the payoff of the
 * day (the principal's floor falls on the newest row, as `quotePayoff` puts it). Empty: the loan
 * was paid by then.
 */
export function owedRowsOn(book: LoanBook, date: string): OwedRow[] {
  const repayment = repaymentOn(book, date);
  if (repayment.rows.every(isPaid)) return [];
  return quotePayoff(repayment, date, book.terms)
    .rows.filter((row) => row.present_value > 0)
    .map((row) => ({ number: row.number, dueDate: row.due_date, owed: row.present_value }));
}
