import { Decimal as DecimalJs } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  iofPaidThroughDays,
  refinancingIofRate,
  refinancingPrincipal,
} from '../../src/domain/credit/refinancing-iof.js';
import { Decimal } from '../../src/domain/money.js';
import { decreeIof } from '../helpers/iof.js';

/** The test's own decimals: 40 digits, half-even, independent of the service's. */
const D = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_EVEN });

/**
 * τ by hand, row by row and day by day, as docs/decisions.md states the rule: every day d of the
 * new loan's row j (1…d_j) is taxed for the new money if d ≤ 365, and for a refinanced balance if
 * day e + d, counted from its original operation, is both ≤ 365 and beyond what its IOF covered.
 */
function tauByHand(
  requested: number,
  refinanced: { amount: number; elapsed: number; paidThrough: number }[],
  parts: number[],
  days: number[],
): DecimalJs {
  const principal = parts.reduce((a, b) => a + b, 0);
  const refinancedTotal = refinanced.reduce((a, b) => a + b.amount, 0);
  let tau = new D(requested - refinancedTotal).div(requested).times(decreeIof.flat);
  parts.forEach((part, j) => {
    const share = new D(part).div(principal);
    for (let d = 1; d <= days[j]!; d++) {
      if (d <= 365)
        tau = tau.plus(
          new D(requested - refinancedTotal)
            .div(requested)
            .times(share)
            .times(decreeIof.dailyIndividual),
        );
      for (const b of refinanced) {
        const day = b.elapsed + d;
        if (day <= 365 && day > Math.max(b.elapsed, b.paidThrough))
          tau = tau.plus(
            new D(b.amount).div(requested).times(share).times(decreeIof.dailyIndividual),
          );
      }
    }
  });
  return tau;
}

const rates = { flat: decreeIof.flat, daily: decreeIof.dailyIndividual };

describe('IOF of a refinancing (contract §17)', () => {
  it('the worked example of docs/decisions.md: R$ 10,000.00, R$ 6,000.00 of it refinanced', () => {
    // One row due in 90 days; the old loan ran 300 days and its IOF covered 320: the refinanced
    // part pays 365 − 320 = 45 days, no flat rate; the new money 90 days and 0.38 %.
    const input = {
      requestedAmount: 1_000_000,
      refinanced: [{ amount: 600_000, elapsedDays: 300, paidThroughDays: 320 }],
      shares: [new Decimal(1)],
      days: [90],
      ...rates,
    };
    expect(refinancingIofRate(input).toString()).toBe('0.006686');
    expect(refinancingPrincipal(input)).toEqual({ principal_amount: 1_006_731, iof_amount: 6_731 });
    // All of it new money: 1.118 %, R$ 113.06 of IOF.
    expect(refinancingPrincipal({ ...input, refinanced: [] })).toEqual({
      principal_amount: 1_011_306,
      iof_amount: 11_306,
    });
  });

  it('agrees with the rule counted day by day', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 500_000 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 7, max: 45 }),
        fc.array(
          fc.record({
            share: fc.integer({ min: 1, max: 100 }),
            elapsed: fc.integer({ min: 0, max: 400 }),
            extra: fc.integer({ min: -60, max: 400 }),
          }),
          { maxLength: 3 },
        ),
        fc.integer({ min: 1, max: 100 }),
        (parts, first, olds, fresh) => {
          const days = parts.map((_, j) => first + 30 * j);
          const totalShares = olds.reduce((a, b) => a + b.share, 0) + fresh;
          const requested = 10_000_000;
          const refinanced = olds.map((old) => ({
            amount: Math.floor((requested * old.share) / totalShares),
            elapsed: old.elapsed,
            paidThrough: Math.max(0, old.elapsed + old.extra),
          }));
          fc.pre(refinanced.every((b) => b.amount > 0));
          const principal = parts.reduce((a, b) => a + b, 0);
          const service = refinancingIofRate({
            requestedAmount: requested,
            refinanced: refinanced.map((b) => ({
              amount: b.amount,
              elapsedDays: b.elapsed,
              paidThroughDays: b.paidThrough,
            })),
            shares: parts.map((part) => new Decimal(part).div(principal)),
            days,
            ...rates,
          });
          expect(
            service
              .minus(tauByHand(requested, refinanced, parts, days).toString())
              .abs()
              .toNumber(),
          ).toBeLessThan(1e-30);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('an old loan past 365 days pays no more daily IOF on its balance', () => {
    const input = {
      requestedAmount: 500_000,
      refinanced: [{ amount: 500_000, elapsedDays: 365, paidThroughDays: 365 }],
      shares: [new Decimal('0.5'), new Decimal('0.5')],
      days: [30, 60],
      ...rates,
    };
    expect(refinancingPrincipal(input)).toEqual({ principal_amount: 500_000, iof_amount: 0 });
  });

  it('what an old loan’s IOF covered: its unpaid rows by principal, never below the days it ran', () => {
    const rows = [
      { principal: 100_000, daysFromRelease: 60 },
      { principal: 300_000, daysFromRelease: 400 },
    ];
    // (100,000 × 60 + 300,000 × 365) ÷ 400,000 = 288.75
    expect(iofPaidThroughDays(rows, 50).toString()).toBe('288.75');
    expect(iofPaidThroughDays(rows, 300).toString()).toBe('300');
    expect(iofPaidThroughDays([], 20).toString()).toBe('20');
  });

  it('refuses balances beyond the requested amount', () => {
    expect(() =>
      refinancingIofRate({
        requestedAmount: 100,
        refinanced: [{ amount: 101, elapsedDays: 1, paidThroughDays: 30 }],
        shares: [new Decimal(1)],
        days: [30],
        ...rates,
      }),
    ).toThrow(RangeError);
  });
});
