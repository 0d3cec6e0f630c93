/**
 * Repricing a loan for the day its money is actually released (contract §13, "Release date").
 * A loan is priced for its simulation's `release_date`; when the disbursement is confirmed on a
 * later date D, the borrower never pays for days without the money, however short the first
 * period that leaves:
 *
 * - row 1's interest runs from D, on the new principal: P' × ((1 + i)^(d₁/30) − 1), half-even;
 * - the IOF is recomputed for D on the amortization the repriced schedule actually has (Decreto
 *   6.306/2007 art. 7, I, b: the daily rate on each installment's principal for its days, capped at
 *   365, plus the flat rate on the principal): row 1's principal part is P' − B₁ (it ends on the
 *   balance it had), the others are as priced. The IOF is financed, so P' = requested + IOF(P'):
 *   found by iterating from the priced principal (each step moves by the IOF's share of the
 *   difference, under 4 %, so a few steps reach the centavo). The financed excess comes off row 1's
 *   principal part, which leaves every balance after row 1 as it was;
 * - rows 2..n are untouched (unless row 1 cannot absorb the credit: see `creditedSchedule`); the
 *   CET is solved again on the flows counted from D.
 *
 * The release window (the money must be claimed 7 days before the first due date, else the loan is
 * cancelled) is the workflow's: money that has left is priced from the day it arrived, whenever
 * that was. A release on or after a due date counts no days for that row (no interest, no daily
 * IOF). Pure and deterministic, like `simulation.ts`: integer centavos in and out, decimals inside
 * (`money.ts`).
 */
import { addDays, daysBetween } from '../business-date.js';
import { Decimal, fromCentavos, toCentavos } from '../money.js';
import type { IofTerms, ReleaseAdjustment } from '../loans/loans.js';
import { CetNotFoundError, cetRates, type CetRates } from './cet.js';
import { monthlyGrowth } from './compounding.js';
import {
  IOF_MAX_DAYS,
  iofRate,
  unitSchedule,
  type Borrower,
  type IofRates,
  type ScheduleRow,
  type SimulationFigures,
} from './simulation.js';

/** The money must be claimed at least this many calendar days before the first due date. */
export const MIN_DAYS_FROM_RELEASE_TO_FIRST_DUE = 7;

/** What the repricing needs besides the figures: the rates as text, so no float enters the math. */
export interface ReleaseTerms {
  /** `YYYY-MM-DD` (America/Sao_Paulo): the day the disbursement was confirmed. */
  releaseDate: string;
  /** The loan's monthly rate as decimal text, e.g. '0.0199' (the figures hold it as a float). */
  monthlyInterestRate: string;
  /** The flat IOF rate the loan was priced with, e.g. '0.0038'. */
  iofFlatRate: string;
  /** The daily IOF rate the loan was priced with (see `pricedIofDailyRate`). */
  iofDailyRate: string;
}

export interface ReleaseRepricing {
  /** The loan's figures for the actual release; as they were when D is not later. */
  figures: SimulationFigures;
  row1Before: ScheduleRow;
  row1After: ScheduleRow;
  /**
   * The interest no longer charged, in centavos (≥ 0): row 1's for the days without the money
   * (and, when row 1 cannot absorb the credit, row 2's on the lower balance).
   */
  interestCredit: number;
  /** The financed IOF no longer due on those days, in centavos (≥ 0). */
  iofCredit: number;
  /** Something ops should hear of (a CET left as priced). */
  warning?: string;
}

/** The repricing was asked with rates or a date that do not fit the loan's figures. */
export class ReleaseRepricingInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReleaseRepricingInputError';
  }
}

/** The last day the money can be claimed for a loan whose first installment falls on this date. */
export function lastReleaseDate(firstDueDate: string): string {
  return addDays(firstDueDate, -MIN_DAYS_FROM_RELEASE_TO_FIRST_DUE);
}

/**
 * The daily IOF rate `simulateLoan` priced a loan with. An MEI keeps its own rate when the
 * principal at that rate is within the limit, and otherwise pays the company rate on a principal
 * that is larger still (the company rate being at least the MEI rate), so the principal alone
 * tells the two apart. `repriceForRelease` checks the answer against the priced IOF.
 */
export function pricedIofDailyRate(
  borrower: Borrower,
  principalAmount: number,
  iof: IofRates,
): string {
  if (borrower === 'individual') return iof.dailyIndividual;
  return principalAmount <= iof.meiPrincipalLimitAmount ? iof.dailyMei : iof.dailyCompany;
}

/** Steps of the principal's fixed point before giving up (a few suffice: see the module). */
const MAX_PRINCIPAL_STEPS = 50;

/**
 * The figures of a loan released on `terms.releaseDate` (contract §13): as priced when that is
 * not later than their `release_date`; otherwise row 1 and the loan totals lowered by the interest
 * and the IOF of the days without the money, and the CET solved again from the actual release date.
 *
 * The rates are checked first: the priced release date must give back the priced IOF to the
 * centavo on the simulation's own principal shares; rates that do not (or a monthly rate other than
 * the figures') throw `ReleaseRepricingInputError` rather than credit a wrong amount.
 */
export function repriceForRelease(
  figures: SimulationFigures,
  terms: ReleaseTerms,
): ReleaseRepricing {
  const releaseDate = terms.releaseDate;
  if (!isCalendarDate(releaseDate))
    throw new ReleaseRepricingInputError(`Not a YYYY-MM-DD date: ${releaseDate}.`);
  if (new Decimal(terms.monthlyInterestRate).toNumber() !== figures.monthly_interest_rate)
    throw new ReleaseRepricingInputError(
      `The monthly rate ${terms.monthlyInterestRate} is not the loan's (${figures.monthly_interest_rate}).`,
    );
  const dueDates = figures.schedule.map((row) => row.due_date);
  const pricedDays = dueDates.map((date) => daysBetween(figures.release_date, date));
  const unit = unitSchedule(terms.monthlyInterestRate, pricedDays);
  const pricedPrincipal = toCentavos(
    fromCentavos(figures.requested_amount).div(
      new Decimal(1).minus(iofRate(unit.shares, pricedDays, terms.iofFlatRate, terms.iofDailyRate)),
    ),
  );
  if (pricedPrincipal !== figures.principal_amount)
    throw new ReleaseRepricingInputError(
      `IOF at ${terms.iofFlatRate} + ${terms.iofDailyRate} a day does not give the loan's priced IOF (${figures.iof_amount} centavos).`,
    );

  const row1Before = figures.schedule[0]!;
  if (releaseDate <= figures.release_date)
    return { figures, row1Before, row1After: row1Before, interestCredit: 0, iofCredit: 0 };

  // Days from the actual release; a due date the money reached late counts none.
  const actualDays = dueDates.map((date) => Math.max(0, daysBetween(releaseDate, date)));
  const growth = [
    monthlyGrowth(terms.monthlyInterestRate)(actualDays[0]!),
    ...unit.growth.slice(1),
  ];
  /** IOF on a schedule's amortization (centavos, exact) for a principal of `principal`. */
  const iofOn = (principal: number, schedule: readonly ScheduleRow[]) =>
    fromCentavos(principal)
      .times(terms.iofFlatRate)
      .plus(
        schedule
          .reduce(
            (sum, row, j) =>
              sum.plus(
                fromCentavos(row.principal_amount).times(Math.min(actualDays[j]!, IOF_MAX_DAYS)),
              ),
            new Decimal(0),
          )
          .times(terms.iofDailyRate),
      );
  // P' = requested + IOF(schedule(P')): a contraction (each step keeps under 4 % of the gap).
  let principal = figures.principal_amount;
  let schedule = creditedSchedule(figures.schedule, principal, growth);
  for (let step = 0; ; step++) {
    const next = toCentavos(
      fromCentavos(figures.requested_amount).plus(iofOn(principal, schedule)),
    );
    if (next === principal) break;
    if (step === MAX_PRINCIPAL_STEPS)
      throw new Error(`The repriced principal did not settle (${principal}, ${next}).`);
    principal = next;
    schedule = creditedSchedule(figures.schedule, principal, growth);
  }
  // A row 1 that was mostly interest (negative amortization) pays IOF on fewer days of a negative
  // share, which can come out above the priced IOF: the borrower then keeps the priced figures for
  // the IOF (a release date never costs more).
  if (principal > figures.principal_amount) {
    principal = figures.principal_amount;
    schedule = creditedSchedule(figures.schedule, principal, growth);
  }
  const iofCredit = figures.principal_amount - principal;
  const row1After = schedule[0]!;

  // Money that reached the borrower on or after a due date leaves that row's flow on day 0; when
  // such flows alone exceed what was released, no annual rate prices the schedule: the CET stays
  // as priced, and ops are told.
  let cet: CetRates = { annual: figures.cet_annual, monthly: figures.cet_monthly };
  let warning: string | undefined;
  try {
    cet = cetRates(
      figures.requested_amount,
      schedule.map((row, j) => ({ amount: row.installment_amount, days: actualDays[j]! })),
      unit.daily,
    );
  } catch (error) {
    if (!(error instanceof CetNotFoundError)) throw error;
    warning = `released ${releaseDate}, on or after a due date: the CET is left as priced (${error.message})`;
  }
  const total = (amountOf: (row: ScheduleRow) => number) =>
    schedule.reduce((sum, row) => sum + amountOf(row), 0);

  return {
    figures: {
      ...figures,
      iof_amount: principal - figures.requested_amount,
      principal_amount: principal,
      // The regular installment (rows 2 on) is unchanged; row 1 shows its own in the schedule.
      total_amount: total((row) => row.installment_amount),
      total_interest_amount: total((row) => row.interest_amount),
      cet_monthly: cet.monthly,
      cet_annual: cet.annual,
      release_date: releaseDate,
      schedule,
    },
    row1Before,
    row1After,
    interestCredit: figures.total_interest_amount - total((row) => row.interest_amount),
    iofCredit,
    ...(warning ? { warning } : {}),
  };
}

/**
 * The schedule once the principal is `principal` from the actual release: row 1 charges interest
 * from then (`growth[0]`) and ends on the balance it had, so its principal part falls by the IOF
 * credit and its installment by both credits; later rows are as they were.
 *
 * Contract §13 assumes row 1 can absorb the credit. It cannot when row 1 was mostly interest (a
 * first due date 45 days out at a high rate over many months, released weeks late): its
 * installment would go negative. Then row 1 charges nothing, the credit it could not absorb stays
 * off the balance it leaves, and row 2 charges interest on that lower balance and ends on its own
 * old balance, so it falls by the rest carried at the contract rate; and so on. The borrower never
 * receives an installment, and loses no part of the credit.
 */
function creditedSchedule(
  priced: readonly ScheduleRow[],
  principal: number,
  growth: readonly Decimal[],
): ScheduleRow[] {
  const schedule = [...priced];
  let balance = principal;
  for (let j = 0; j < schedule.length; j++) {
    const row = schedule[j]!;
    const interest = toCentavos(fromCentavos(balance).times(growth[j]!.minus(1)));
    const principalPart = balance - row.balance_amount;
    if (principalPart + interest >= 0) {
      schedule[j] = {
        ...row,
        installment_amount: principalPart + interest,
        principal_amount: principalPart,
        interest_amount: interest,
      };
      return schedule;
    }
    schedule[j] = {
      ...row,
      installment_amount: 0,
      principal_amount: -interest,
      interest_amount: interest,
      balance_amount: balance + interest,
    };
    balance += interest;
  }
  // Unreachable: the credit is a few weeks of interest and IOF, far less than the whole debt.
  throw new Error('The release credit exceeds the whole schedule.');
}

function isCalendarDate(value: string): boolean {
  return (
    /^\d{4}-\d{2}-\d{2}$/.test(value) &&
    !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) &&
    addDays(value, 0) === value
  );
}

/**
 * A loan's figures once its money is released on `releaseDate` (contract §13): repriced when that
 * is later than priced — from the day the money actually arrived, however late it was confirmed
 * (the release window only cancels a loan whose money has not left). Rates that do not give back
 * the priced IOF (a loan priced before it kept its rates, under other rates) leave the figures as
 * priced, with a warning for ops.
 */
export function releasedOn(
  loan: { figures: SimulationFigures; iofTerms: IofTerms | null },
  releaseDate: string,
  iof: IofRates,
): { figures: SimulationFigures; adjustment?: ReleaseAdjustment; warning?: string } {
  const { figures } = loan;
  if (releaseDate <= figures.release_date) return { figures };
  // A loan priced before it kept its rates: the rates that give back its priced IOF.
  const candidates = loan.iofTerms
    ? [loan.iofTerms]
    : [iof.dailyIndividual, iof.dailyMei, iof.dailyCompany].map((dailyRate) => ({
        flatRate: iof.flat,
        dailyRate,
      }));
  let refusal = '';
  for (const terms of candidates) {
    try {
      const outcome = repriceForRelease(figures, {
        releaseDate,
        monthlyInterestRate: String(figures.monthly_interest_rate),
        iofFlatRate: terms.flatRate,
        iofDailyRate: terms.dailyRate,
      });
      return {
        figures: outcome.figures,
        adjustment: {
          priced_release_date: figures.release_date,
          interest_credit_amount: outcome.interestCredit,
          iof_credit_amount: outcome.iofCredit,
          row1_installment_before: outcome.row1Before.installment_amount,
          row1_installment_after: outcome.row1After.installment_amount,
        },
        ...(outcome.warning ? { warning: `loan released ${releaseDate}: ${outcome.warning}` } : {}),
      };
    } catch (error) {
      if (!(error instanceof ReleaseRepricingInputError)) throw error;
      refusal = error.message;
    }
  }
  return { figures, warning: `loan released ${releaseDate} left as priced: ${refusal}` };
}
