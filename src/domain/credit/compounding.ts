/**
 * Compounding factors for the loan math: roots and whole powers of a growth or discount factor,
 * cached because the simulation and the CET solver ask for the same few again and again. Pure and
 * deterministic. The root cache is keyed by value alone, not precision: it is for the 40-digit
 * `Decimal` of `money.ts` only.
 */
import { Decimal } from '../money.js';

/**
 * The k-th root of x, by logarithms (decimal.js's fractional pow costs twice as much), memoized:
 * the hot path asks for the same few roots (an offer's daily factor, a CET's monthly equivalent)
 * again and again, and a root is a pure function of its arguments.
 */
const roots = new Map<string, Decimal>();
export function root(x: Decimal, k: number): Decimal {
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
export function powers(x: Decimal): (k: number) => Decimal {
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

/** Days in the contract's month: a monthly rate compounds over 30 calendar days (contract §7). */
export const DAYS_PER_MONTH = 30;

/**
 * The growth of money at a monthly rate over whole calendar days: (1 + i)^(d/30), as
 * (1 + i)^q · (1 + i)^(r/30) for d = 30q + r. Whole months multiply by (1 + i) itself, so a
 * 30-day period grows by exactly 1.023 at 2.3 % and a half-centavo of interest stays a tie that
 * half-even rounding settles (through the 30th root alone, 1.023 came back as 1.023000…012 and
 * the tie rounded up). Only the days left over take the root. Each day count is computed once per
 * rate (`powers` caches both parts). Days below zero are refused: no period runs backwards.
 */
const growths = new Map<string, (days: number) => Decimal>();
export function monthlyGrowth(monthlyRate: string): (days: number) => Decimal {
  let growth = growths.get(monthlyRate);
  if (growth) return growth;
  const monthly = new Decimal(1).plus(monthlyRate);
  const months = powers(monthly);
  const days = powers(root(monthly, DAYS_PER_MONTH));
  const cache = new Map<number, Decimal>();
  growth = (d) => {
    if (!Number.isSafeInteger(d) || d < 0) throw new RangeError(`not a day count: ${d}`);
    let factor = cache.get(d);
    if (!factor) {
      const q = Math.floor(d / DAYS_PER_MONTH);
      const r = d % DAYS_PER_MONTH;
      factor = r === 0 ? months(q) : q === 0 ? days(r) : months(q).times(days(r));
      cache.set(d, factor);
    }
    return factor;
  };
  if (growths.size >= 1_000) growths.clear();
  growths.set(monthlyRate, growth);
  return growth;
}
