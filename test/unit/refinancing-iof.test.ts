import { Decimal as DecimalJs } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  iofPaidThroughDays,
  refinancingIofRate,
  refinancingPrincipal,
  simulateRefinancing,
} from '../../src/domain/credit/refinancing-iof.js';
import { simulateLoan } from '../../src/domain/credit/simulation.js';
import {
  refinancedLoanChanged,
  refinancedLoanRefusal,
  refinancesProblems,
  refinancingCoverage,
} from '../../src/domain/loans/refinancing.js';
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

describe('a refinancing’s simulation and its checks (contract §17)', () => {
  const simulation = {
    requestedAmount: 1_000_000,
    installments: 1,
    monthlyInterestRate: '0.0199',
    releaseDate: '2026-01-01',
    firstDueDate: '2026-04-01',
    borrower: 'individual' as const,
    iof: decreeIof,
  };

  it('prices the IOF with the refinancing rule, the rest as §7', () => {
    // The worked example's loan: one row due in 90 days, R$ 6,000.00 of an old loan released 300
    // days before whose IOF covered 320 days.
    const payoffs = [
      { loanId: 'ln_old', payoffAmount: 600_000, releasedOn: '2025-03-07', paidThroughDays: 320 },
    ];
    const coverage = refinancingCoverage(1_000_000, '2026-01-01', payoffs);
    expect(coverage).toEqual({
      covered: true,
      newMoney: 400_000,
      balances: [{ amount: 600_000, elapsedDays: 300, paidThroughDays: 320 }],
    });
    if (!coverage.covered) return;
    const figures = simulateRefinancing(simulation, coverage.balances);
    expect(figures).toMatchObject({ principal_amount: 1_006_731, iof_amount: 6_731 });
    const plain = simulateLoan(simulation);
    expect(plain.principal_amount).toBe(1_011_306);
    expect(simulateRefinancing(simulation, [])).toEqual(plain);
    // The schedule is §7's on the financed principal.
    expect(figures.schedule.reduce((sum, row) => sum + row.principal_amount, 0)).toBe(1_006_731);
  });

  it('refuses a requested amount below the payoffs, naming each', () => {
    const refused = refinancingCoverage(100_000, '2026-01-01', [
      { loanId: 'ln_a', payoffAmount: 60_000, releasedOn: '2025-06-01', paidThroughDays: 200 },
      { loanId: 'ln_b', payoffAmount: 40_001, releasedOn: '2025-06-01', paidThroughDays: 200 },
    ]);
    expect(refused).toMatchObject({ covered: false, payoffTotal: 100_001 });
    if (refused.covered) return;
    expect(refused.message).toContain('ln_a 60000, ln_b 40001');
  });

  it('checks the list, then each loan', () => {
    expect(refinancesProblems(['ln_a', 'ln_b'])).toEqual([]);
    expect(refinancesProblems(['ln_a', 'ln_b', 'ln_a'])).toMatchObject([
      { code: 'duplicate_refinanced_loan', index: 2 },
    ]);
    expect(refinancesProblems(['1', '2', '3', '4', '5', '6'])).toMatchObject([
      { code: 'too_many_refinanced_loans' },
    ]);
    const loan = {
      id: 'ln_a',
      customerId: 'cus_1',
      status: 'active',
      writtenOffAt: null,
      refinancedBy: null,
    };
    expect(refinancedLoanRefusal(loan, 'ln_a', 'cus_1')).toBeUndefined();
    expect(refinancedLoanRefusal(undefined, 'ln_a', 'cus_1')).toMatchObject({
      status: 404,
      code: 'loan_not_found',
    });
    expect(refinancedLoanRefusal(loan, 'ln_a', 'cus_2')).toMatchObject({ code: 'loan_not_found' });
    expect(refinancedLoanRefusal({ ...loan, status: 'finished' }, 'ln_a', 'cus_1')).toMatchObject({
      status: 409,
      code: 'refinanced_loan_not_active',
    });
    expect(
      refinancedLoanRefusal({ ...loan, writtenOffAt: new Date() }, 'ln_a', 'cus_1'),
    ).toMatchObject({ code: 'refinanced_loan_written_off' });
    expect(refinancedLoanRefusal({ ...loan, refinancedBy: 'ln_z' }, 'ln_a', 'cus_1')).toMatchObject(
      { code: 'loan_already_being_refinanced' },
    );
  });

  it('at the release: the old loan still active and its payoff what the CCB covers', () => {
    const covered = { loanId: 'ln_a', payoffAmount: 50_000 };
    expect(
      refinancedLoanChanged(covered, { status: 'active', payoffAmount: 50_000 }),
    ).toBeUndefined();
    // Lower (paid meanwhile): the difference would be new money taxed as a refinanced balance.
    expect(refinancedLoanChanged(covered, { status: 'active', payoffAmount: 49_000 })).toContain(
      'not the 50000',
    );
    expect(refinancedLoanChanged(covered, { status: 'active', payoffAmount: 50_001 })).toContain(
      'not the 50000',
    );
    expect(refinancedLoanChanged(covered, { status: 'finished', payoffAmount: null })).toContain(
      'is finished',
    );
  });
});
