/**
 * Compounding factors for the loan math: roots and whole powers of a growth or discount factor,
 * cached because the simulation and the CET solver ask for the same few again and again. Pure and
 * deterministic. The root cache is keyed by value alone, not precision: it is for the 40-digit
 * `Decimal` of `money.ts` only.
 */
import type { Decimal } from '../money.js';

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
