/**
 * The repayment of a loan whose payments were all recorded before contract §13's allocation: its
 * first `paid` rows were paid in full, oldest first — each by a payment of its amount due that
 * day, or the trailing ones together by a payoff at their present values. Derived from the loan's
 * record alone, so such a loan reads (and takes its next payment) like any other.
 */
import { businessDate } from '../business-date.js';
import type { ScheduleRow } from '../credit/simulation.js';
import { startRepayment, type Repayment } from './allocation.js';
import { amountDue, payoffQuote, type LateChargeRates } from './repayment.js';

export interface LegacyRecord {
  schedule: readonly ScheduleRow[];
  principalAmount: number;
  monthlyRate: string;
  lateChargeRates: LateChargeRates;
  paidInstallments: number;
  /** The `paid_at` of each paid row, oldest first. */
  paidDates: readonly string[];
}

export function legacyRepayment(loan: LegacyRecord): Repayment {
  const { schedule, paidInstallments: paid, paidDates } = loan;
  const fresh = startRepayment(schedule, loan.principalAmount);
  if (paid === 0) return fresh;
  // A payoff settled the trailing rows at one instant, each at its value that day.
  const last = paidDates[paid - 1];
  let payoffFrom = paid - 1;
  while (payoffFrom > 0 && paidDates[payoffFrom - 1] === last) payoffFrom -= 1;
  const settledByPayoff =
    paid === schedule.length && paid - payoffFrom > 1 && last !== undefined
      ? payoffQuote(
          schedule.slice(payoffFrom),
          businessDate(new Date(last)),
          loan.monthlyRate,
          loan.lateChargeRates,
        ).rows
      : [];
  return {
    rows: fresh.rows.map((row, index) => {
      const paidAt = paidDates[index];
      if (index >= paid || paidAt === undefined) return row;
      const byPayoff = settledByPayoff.find((r) => r.number === row.number);
      return {
        ...row,
        settled: String(row.installment_amount),
        paid_amount:
          byPayoff?.present_value ??
          amountDue(schedule[index]!, businessDate(new Date(paidAt)), loan.lateChargeRates).amount,
        paid_at: paidAt,
      };
    }),
    principal_outstanding: schedule[paid - 1]!.balance_amount,
    last_paid_at: last ?? null,
  };
}
