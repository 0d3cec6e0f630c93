/**
 * The money math of a loan simulation (contract §7). Pure and deterministic: integer centavos in
 * and out, decimals inside (`money.ts`: 40 digits, half-even), no binary float on an amount.
 *
 * - Price on calendar days: the monthly rate i compounds per day as (1 + i)^(d/30); the fixed
 *   installment is the one whose value on the release date, discounted on the real due dates,
 *   equals the principal.
 * - IOF, financed: a flat rate on the principal plus a daily rate on each installment's principal
 *   part for min(days, 365); its total rate τ does not depend on the amount, so
 *   principal = requested ÷ (1 − τ).
 * - CET (Res. CMN 4.881/2020): the annual rate at which the installments, on their dates over
 *   365-day years, are worth what the customer receives (`cet.ts`).
 */
import { daysBetween } from '../business-date.js';
import { Decimal, fromCentavos, reportedRate, toCentavos } from '../money.js';
import { cetRates } from './cet.js';
import { DAYS_PER_MONTH, monthlyGrowth, root } from './compounding.js';

export { CetNotFoundError, solveCet } from './cet.js';

export interface IofRates {
  /** Flat rate on the principal, e.g. '0.0038'. */
  flat: string;
  /** Daily rates, e.g. '0.000082' (0.0082 % a day). */
  dailyIndividual: string;
  dailyCompany: string;
  dailyMei: string;
  /** The MEI daily rate applies while the principal is at most this many centavos. */
  meiPrincipalLimitAmount: number;
}

/** A customer with a cnpj is an MEI in this product (its KYC asks for the CCMEI). */
export type Borrower = 'individual' | 'mei';

export interface SimulationInput {
  /** What the customer receives, in centavos. */
  requestedAmount: number;
  installments: number;
  /** Decimal text, e.g. '0.0199'. */
  monthlyInterestRate: string;
  /** `YYYY-MM-DD`: the day the money is released. */
  releaseDate: string;
  /** `YYYY-MM-DD`: the first due date; the others fall on its day of each following month. */
  firstDueDate: string;
  borrower: Borrower;
  iof: IofRates;
}

export interface ScheduleRow {
  number: number;
  due_date: string;
  installment_amount: number;
  principal_amount: number;
  interest_amount: number;
  /** Principal still owed after this row. */
  balance_amount: number;
}

export interface SimulationFigures {
  requested_amount: number;
  iof_amount: number;
  principal_amount: number;
  installments: number;
  installment_amount: number;
  total_amount: number;
  total_interest_amount: number;
  monthly_interest_rate: number;
  annual_interest_rate: number;
  cet_monthly: number;
  cet_annual: number;
  release_date: string;
  first_due_date: string;
  schedule: ScheduleRow[];
}

/** IOF's daily rate counts at most one year per installment. */
export const IOF_MAX_DAYS = 365;

/**
 * Monthly due dates on the first due date's day of month, clamped to each month's last day
 * (Jan 31 → Feb 28 or 29 → Mar 31).
 */
export function dueDates(firstDueDate: string, count: number): string[] {
  const [year, month, day] = firstDueDate.split('-').map(Number) as [number, number, number];
  return Array.from({ length: count }, (_, k) => {
    const monthIndex = month - 1 + k;
    const lastDay = new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate();
    return new Date(Date.UTC(year, monthIndex, Math.min(day, lastDay))).toISOString().slice(0, 10);
  });
}

/** (1 + monthly)^12 − 1, half-even to 4 decimals. */
export function annualInterestRate(monthly: string): number {
  return reportedRate(new Decimal(1).plus(monthly).pow(12).minus(1));
}

/** The textbook Price installment for equal 30-day periods: P·i / (1 − (1 + i)^−n), in centavos. */
export function priceInstallment(principal: number, monthlyRate: string, n: number): number {
  const i = new Decimal(monthlyRate);
  if (i.isZero()) return toCentavos(fromCentavos(principal).div(n));
  return toCentavos(
    fromCentavos(principal)
      .times(i)
      .div(new Decimal(1).minus(new Decimal(1).plus(i).pow(-n))),
  );
}

/**
 * The schedule of one unit of principal on real dates: the installment per unit and each row's
 * growth factor (1 + i)^(Δd/30) and exact principal share. Exported for the release repricing
 * (contract §13), which recomputes the IOF on these very shares.
 */
export function unitSchedule(monthlyRate: string, days: number[]) {
  // (1 + i)^(1/30), the CET solver's first guess; each period grows by (1 + i)^(gap/30), whole
  // months exactly (see `monthlyGrowth`).
  const daily = root(new Decimal(1).plus(monthlyRate), DAYS_PER_MONTH);
  const perGap = monthlyGrowth(monthlyRate);
  const growth = days.map((d, j) => perGap(d - (j === 0 ? 0 : days[j - 1]!)));
  let discount = new Decimal(1);
  let presentValue = new Decimal(0);
  for (const factor of growth) {
    discount = discount.div(factor);
    presentValue = presentValue.plus(discount);
  }
  const installment = new Decimal(1).div(presentValue);
  let balance = new Decimal(1);
  const shares = growth.map((factor) => {
    const share = installment.minus(balance.times(factor.minus(1)));
    balance = balance.minus(share);
    return share;
  });
  return { daily, installment, growth, shares };
}

/** τ: the IOF of a schedule as a fraction of its principal, for one daily rate. */
export function iofRate(shares: Decimal[], days: number[], flat: string, daily: string): Decimal {
  const weightedDays = shares.reduce(
    (sum, share, j) => sum.plus(share.times(Math.min(days[j]!, IOF_MAX_DAYS))),
    new Decimal(0),
  );
  return new Decimal(flat).plus(new Decimal(daily).times(weightedDays));
}

/** τ of a schedule for one daily rate: `iofRate`, or a refinancing's (refinancing-iof.ts). */
export type IofRateOf = (shares: Decimal[], days: number[], flat: string, daily: string) => Decimal;

/** The principal that leaves `requested` in the customer's hands once IOF is financed. */
function financedPrincipal(
  input: SimulationInput,
  shares: Decimal[],
  days: number[],
  rateOf: IofRateOf,
): number {
  const { iof } = input;
  const principalAt = (daily: string) =>
    toCentavos(
      fromCentavos(input.requestedAmount).div(
        new Decimal(1).minus(rateOf(shares, days, iof.flat, daily)),
      ),
    );
  if (input.borrower === 'individual') return principalAt(iof.dailyIndividual);
  const asMei = principalAt(iof.dailyMei);
  return asMei <= iof.meiPrincipalLimitAmount ? asMei : principalAt(iof.dailyCompany);
}

/**
 * The Price rows of `principal` centavos on `dates` (§7's rounding): every row's interest rounded
 * half-even, the installment rounded once, and the last row absorbing the residue so the principal
 * parts sum exactly to `principal`. A payment agreement's rows are these too.
 */
export function amortize(
  principal: number,
  unit: Pick<ReturnType<typeof unitSchedule>, 'installment' | 'growth'>,
  dates: readonly string[],
): ScheduleRow[] {
  const n = dates.length;
  const installment = toCentavos(unit.installment.times(fromCentavos(principal)));
  let balance = principal;
  return unit.growth.map((factor, j) => {
    const interest = toCentavos(fromCentavos(balance).times(factor.minus(1)));
    // The last row absorbs every rounding residue: principal parts sum exactly to the principal.
    const principalPart = j === n - 1 ? balance : installment - interest;
    balance -= principalPart;
    return {
      number: j + 1,
      due_date: dates[j]!,
      installment_amount: principalPart + interest,
      principal_amount: principalPart,
      interest_amount: interest,
      balance_amount: balance,
    };
  });
}

/**
 * Price on calendar days for `principal` centavos released on `releaseDate`, with `count` monthly
 * rows from `firstDueDate` (no IOF: the simulation adds it; an agreement owes none).
 */
export function priceSchedule(
  principal: number,
  monthlyRate: string,
  releaseDate: string,
  firstDueDate: string,
  count: number,
): ScheduleRow[] {
  const dates = dueDates(firstDueDate, count);
  const days = dates.map((date) => daysBetween(releaseDate, date));
  return amortize(principal, unitSchedule(monthlyRate, days), dates);
}

/** `rateOf`: how IOF is priced (a refinancing prices its refinanced balances apart, §17). */
export function simulateLoan(
  input: SimulationInput,
  rateOf: IofRateOf = iofRate,
): SimulationFigures {
  const { installments: n, releaseDate, firstDueDate } = input;
  const dates = dueDates(firstDueDate, n);
  const days = dates.map((date) => daysBetween(releaseDate, date));
  const unit = unitSchedule(input.monthlyInterestRate, days);

  const principal = financedPrincipal(input, unit.shares, days, rateOf);
  const schedule = amortize(principal, unit, dates);

  const cet = cetRates(
    input.requestedAmount,
    schedule.map((row, j) => ({ amount: row.installment_amount, days: days[j]! })),
    unit.daily,
  );
  const total = (amountOf: (row: ScheduleRow) => number) =>
    schedule.reduce((sum, row) => sum + amountOf(row), 0);

  return {
    requested_amount: input.requestedAmount,
    iof_amount: principal - input.requestedAmount,
    principal_amount: principal,
    installments: n,
    installment_amount: schedule[0]!.installment_amount,
    total_amount: total((row) => row.installment_amount),
    total_interest_amount: total((row) => row.interest_amount),
    monthly_interest_rate: new Decimal(input.monthlyInterestRate).toNumber(),
    annual_interest_rate: annualInterestRate(input.monthlyInterestRate),
    cet_monthly: cet.monthly,
    cet_annual: cet.annual,
    release_date: releaseDate,
    first_due_date: firstDueDate,
    schedule,
  };
}
