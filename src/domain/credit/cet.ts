/**
 * The CET, custo efetivo total (Res. CMN 4.881/2020, art. 4): the annual rate at which a loan's
 * installments, on their dates over 365-day years, are worth what the customer receives. Pure and
 * deterministic: integer centavos in, decimals inside (`money.ts`), rates out.
 */
import { Decimal, reportedRate } from '../money.js';
import { powers, root } from './compounding.js';

/** For the first stretch of the CET search only: never for an amount. */
const Rough = Decimal.clone({ precision: 20 });

/** The CET is reported to 4 decimals; the solver stops far below that (in the daily factor). */
const CET_TOLERANCE = '1e-16';
/** The cheap first stretch of the search stops here, well inside the rough precision. */
const ROUGH_TOLERANCE = '1e-13';

/** Thrown when the CET root cannot be bracketed or the iteration does not converge. */
export class CetNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CetNotFoundError';
  }
}

/** A payment of `amount` centavos, `days` calendar days after the money is released. */
export interface CashFlow {
  amount: number;
  days: number;
}

/** The CET as reported: annual, and its monthly equivalent, half-even to 4 decimals. */
export interface CetRates {
  annual: number;
  monthly: number;
}

/**
 * The CET of a schedule, annual and monthly. The monthly rate is the twelfth root of the annual
 * rate as reported (already rounded to 4 decimals), not of the exact root.
 */
export function cetRates(requested: number, flows: readonly CashFlow[], guess?: Decimal): CetRates {
  const annual = solveCet(requested, flows, guess).toDecimalPlaces(4, Decimal.ROUND_HALF_EVEN);
  return {
    annual: annual.toNumber(),
    monthly: reportedRate(root(new Decimal(1).plus(annual), 12).minus(1)),
  };
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
  flows: readonly CashFlow[],
  guess: Decimal = new Decimal(1),
): Decimal {
  // Most of the way at 20 digits, where each step is several times cheaper; then the last step
  // or two at full precision, so the root is the same as a full-precision search would find.
  const near = dailyFactor(Rough, requested, flows, new Rough(guess.toString()), ROUGH_TOLERANCE);
  const q = dailyFactor(Decimal, requested, flows, new Decimal(near.toString()), CET_TOLERANCE);
  return q.pow(365).minus(1);
}

/**
 * The daily factor q at which the flows are worth `requested`: Newton on q with a bisection
 * fallback, in the given precision. The root lies between q = 0.99 (about −97.4 % a year) and
 * q = 1.01 (about +3,678 %), or the upper bound is widened until it does; the bounds are checked
 * only if a step strays, since every evaluation costs a pass over the schedule.
 */
function dailyFactor(
  WorkingDecimal: typeof Decimal,
  requested: number,
  flows: readonly CashFlow[],
  start: Decimal,
  tolerance: string,
): Decimal {
  const target = new WorkingDecimal(requested);
  // Discounting walks the flows in date order: one small whole power of 1/q per gap.
  const presentValueAt = (q: Decimal) => {
    const perGap = powers(new WorkingDecimal(1).div(q));
    let value = new WorkingDecimal(0);
    let weighted = new WorkingDecimal(0);
    let discount = new WorkingDecimal(1);
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

  let low = new WorkingDecimal('0.99');
  let high = new WorkingDecimal('1.01');
  let bracketed = false;
  const bracket = () => {
    if (presentValueAt(low).excess.isNegative())
      throw new CetNotFoundError(
        'The installments are worth less than the amount at −97 % a year.',
      );
    while (presentValueAt(high).excess.isPositive()) {
      low = high;
      high = high.minus(1).times(2).plus(1);
      if (high.greaterThan(2))
        throw new CetNotFoundError('No CET below 2^365 a year: the schedule cannot be priced.');
    }
    bracketed = true;
  };

  let q = start.greaterThan(low) && start.lessThan(high) ? start : low.plus(high).div(2);
  for (let step = 0; step < 100; step++) {
    const { excess, slope } = presentValueAt(q);
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
