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
 *   365-day years, are worth what the customer receives.
 */
import { daysBetween } from '../business-date.js';
import { Decimal, fromCentavos, reportedRate, toCentavos } from '../money.js';

/** For the first stretch of the CET search only: never for an amount. */
const Rough = Decimal.clone({ precision: 20 });

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

/** Thrown when the CET root cannot be bracketed or the iteration does not converge. */
export class CetNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CetNotFoundError';
  }
}

/** The CET is reported to 4 decimals; the solver stops far below that (in the daily factor). */
const CET_TOLERANCE = '1e-16';
/** The cheap first stretch of the search stops here, well inside the rough precision. */
const ROUGH_TOLERANCE = '1e-13';
/** IOF's daily rate counts at most one year per installment. */
const IOF_MAX_DAYS = 365;

/**
 * The k-th root of x, by logarithms (decimal.js's fractional pow costs twice as much), memoized:
 * the hot path asks for the same few roots (an offer's daily factor, a CET's monthly equivalent)
 * again and again, and a root is a pure function of its arguments.
 */
const roots = new Map<string, Decimal>();
function root(x: Decimal, k: number): Decimal {
  const key = `${x.toString()}^1/${k}`;
  let value = roots.get(key);
  if (!value) {
    if (roots.size >= 10_000) roots.clear();
    roots.set(key, (value = x.ln().div(k).exp()));
  }
  return value;
}

/**
 * x^k for whole k, each k computed once, and from a cached neighbour when there is one: monthly
 * gaps take only a few values (28–31 days), one multiplication apart.
 */
function powers(x: Decimal): (k: number) => Decimal {
  const cache = new Map<number, Decimal>();
  return (k) => {
    let power = cache.get(k);
    if (!power) {
      const below = cache.get(k - 1);
      const above = below ? undefined : cache.get(k + 1);
      power = below ? below.times(x) : above ? above.div(x) : x.pow(k);
      cache.set(k, power);
    }
    return power;
  };
}

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
 * growth factor (1 + i)^(Δd/30) and exact principal share.
 */
function unitSchedule(monthlyRate: string, days: number[]) {
  // (1 + i)^(1/30) once; every period is then a whole power of it.
  const daily = root(new Decimal(1).plus(monthlyRate), 30);
  const perGap = powers(daily);
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

/** The principal that leaves `requested` in the customer's hands once IOF is financed. */
function financedPrincipal(input: SimulationInput, shares: Decimal[], days: number[]): number {
  const { iof } = input;
  const principalAt = (daily: string) =>
    toCentavos(
      fromCentavos(input.requestedAmount).div(
        new Decimal(1).minus(iofRate(shares, days, iof.flat, daily)),
      ),
    );
  if (input.borrower === 'individual') return principalAt(iof.dailyIndividual);
  const asMei = principalAt(iof.dailyMei);
  return asMei <= iof.meiPrincipalLimitAmount ? asMei : principalAt(iof.dailyCompany);
}

/**
 * The annual rate r solving requested = Σ installment_j / (1 + r)^(d_j/365). Solved for the daily
 * factor q = (1 + r)^(1/365), which turns the sum into a polynomial in 1/q (whole powers only, no
 * logarithms in the loop): the value falls as q rises, so the root is bracketed first, then found
 * by Newton steps that fall back to bisection whenever a step would leave the bracket. `guess` is
 * a daily factor to start from (the contract rate's: the CET is never below it with costs added).
 */
export function solveCet(
  requested: number,
  flows: { amount: number; days: number }[],
  guess: Decimal = new Decimal(1),
): Decimal {
  // Most of the way at 20 digits, where each step is several times cheaper; then the last step
  // or two at full precision, so the root is the same as a full-precision search would find.
  const near = newton(Rough, requested, flows, new Rough(guess.toString()), ROUGH_TOLERANCE);
  const q = newton(Decimal, requested, flows, new Decimal(near.toString()), CET_TOLERANCE);
  return q.pow(365).minus(1);
}

/**
 * Newton on q with a bisection fallback, in the given precision. The root lies between
 * q = 0.99 (about −97.4 % a year) and q = 1.01 (about +3,678 %), or the upper bound is widened
 * until it does; the bounds are checked only if a step strays, since every evaluation costs a pass
 * over the schedule.
 */
function newton(
  Num: typeof Decimal,
  requested: number,
  flows: { amount: number; days: number }[],
  start: Decimal,
  tolerance: string,
): Decimal {
  const target = new Num(requested);
  // Discounting walks the flows in date order: one small whole power of 1/q per gap.
  const valueAt = (q: Decimal) => {
    const perGap = powers(new Num(1).div(q));
    let value = new Num(0);
    let weighted = new Num(0);
    let discount = new Num(1);
    let previousDays = 0;
    for (const flow of flows) {
      discount = discount.times(perGap(flow.days - previousDays));
      previousDays = flow.days;
      const discounted = discount.times(flow.amount);
      value = value.plus(discounted);
      weighted = weighted.plus(discounted.times(flow.days));
    }
    // d/dq Σ a·q^(−d) = −Σ a·d·q^(−d−1)
    return { excess: value.minus(target), slope: weighted.div(q).neg() };
  };

  let low = new Num('0.99');
  let high = new Num('1.01');
  let bracketed = false;
  const bracket = () => {
    if (valueAt(low).excess.isNegative())
      throw new CetNotFoundError(
        'The installments are worth less than the amount at −97 % a year.',
      );
    while (valueAt(high).excess.isPositive()) {
      low = high;
      high = high.minus(1).times(2).plus(1);
      if (high.greaterThan(2))
        throw new CetNotFoundError('No CET below 2^365 a year: the schedule cannot be priced.');
    }
    bracketed = true;
  };

  let q = start.greaterThan(low) && start.lessThan(high) ? start : low.plus(high).div(2);
  for (let step = 0; step < 100; step++) {
    const { excess, slope } = valueAt(q);
    if (excess.isZero()) return q;
    if (excess.isPositive()) low = q;
    else high = q;
    let next = q.minus(excess.div(slope));
    if (next.lessThanOrEqualTo(low) || next.greaterThanOrEqualTo(high)) {
      if (!bracketed) bracket();
      next = low.plus(high).div(2);
    }
    if (next.minus(q).abs().lessThan(tolerance)) return next;
    q = next;
  }
  throw new CetNotFoundError('The CET iteration did not converge in 100 steps.');
}

export function simulateLoan(input: SimulationInput): SimulationFigures {
  const { installments: n, releaseDate, firstDueDate } = input;
  const dates = dueDates(firstDueDate, n);
  const days = dates.map((date) => daysBetween(releaseDate, date));
  const unit = unitSchedule(input.monthlyInterestRate, days);

  const principal = financedPrincipal(input, unit.shares, days);
  const installment = toCentavos(unit.installment.times(fromCentavos(principal)));

  let balance = principal;
  const schedule: ScheduleRow[] = unit.growth.map((factor, j) => {
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

  const cetAnnual = solveCet(
    input.requestedAmount,
    schedule.map((row, j) => ({ amount: row.installment_amount, days: days[j]! })),
    unit.daily,
  ).toDecimalPlaces(4, Decimal.ROUND_HALF_EVEN);
  const sum = (pick: (row: ScheduleRow) => number) =>
    schedule.reduce((total, row) => total + pick(row), 0);

  return {
    requested_amount: input.requestedAmount,
    iof_amount: principal - input.requestedAmount,
    principal_amount: principal,
    installments: n,
    installment_amount: schedule[0]!.installment_amount,
    total_amount: sum((row) => row.installment_amount),
    total_interest_amount: sum((row) => row.interest_amount),
    monthly_interest_rate: new Decimal(input.monthlyInterestRate).toNumber(),
    annual_interest_rate: annualInterestRate(input.monthlyInterestRate),
    cet_monthly: reportedRate(root(new Decimal(1).plus(cetAnnual), 12).minus(1)),
    cet_annual: cetAnnual.toNumber(),
    release_date: releaseDate,
    first_due_date: firstDueDate,
    schedule,
  };
}
