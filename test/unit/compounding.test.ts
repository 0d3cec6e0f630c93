import { Decimal as DecimalJs } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { monthlyGrowth } from '../../src/domain/credit/compounding.js';
import { allocatePayment, startRepayment } from '../../src/domain/loans/allocation.js';
import { fromCentavos, toCentavos } from '../../src/domain/money.js';

/** The test's own decimals, twice the module's precision: the reference power. */
const Precise = DecimalJs.clone({ precision: 80, rounding: DecimalJs.ROUND_HALF_EVEN });

/** (1 + i)^(d/30) at 80 digits, through a fractional power (not the module's construction). */
const reference = (rate: string, days: number) =>
  new Precise(1).plus(rate).pow(new Precise(days).div(30));

describe('growth over whole months', () => {
  it('is (1 + i) itself over 30 days, and its whole powers over 60, 90, 360', () => {
    for (const rate of ['0.023', '0.0199', '0.0249', '0.0299', '0.0349']) {
      const growth = monthlyGrowth(rate);
      expect(growth(30).toString()).toBe(new DecimalJs(1).plus(rate).toString());
      expect(growth(60).eq(new DecimalJs(1).plus(rate).pow(2))).toBe(true);
      expect(growth(0).toString()).toBe('1');
    }
  });

  // The review's ties (2 of 400 loans were a centavo off): half a centavo of interest over a
  // 30-day period stays a tie, which half-even settles towards the even centavo.
  it('leaves a half-centavo of interest a tie: 509,500 × 0.023 = 11,718.5 → 11,718', () => {
    const interest = fromCentavos(509_500).times(monthlyGrowth('0.023')(30).minus(1));
    expect(interest.toString()).toBe('11718.5');
    expect(toCentavos(interest)).toBe(11_718);
  });

  it('carries a part payment 30 days at (1 + i) exactly: 45,000 at 1.99 % owes 45,895.5 less', () => {
    // One row due 30 days after the payment, paid in part: what is left of it falls by the part
    // carried to its due date, and the transaction shows the discount of paying early.
    const repayment = startRepayment(
      [{ number: 1, due_date: '2027-01-31', installment_amount: 100_000 }],
      95_000,
    );
    const allocation = allocatePayment(
      repayment,
      { amount: 45_000, date: '2027-01-01', paidAt: '2027-01-01T12:00:00Z', applyTo: 'next' },
      {
        monthlyRate: '0.0199',
        lateCharges: { feeRate: '0.02', monthlyInterestRate: '0.01' },
      },
    );
    expect(allocation.after.rows[0]!.settled).toBe('45895.5');
    expect(allocation.discount).toBe(896); // 45,895.5 → 45,896 (even); it came out 895 before
  });
});

describe('properties', () => {
  const rates = fc
    .integer({ min: 1, max: 1500 })
    .map((basisPoints) => new DecimalJs(basisPoints).div(10_000).toString());

  it('matches a high-precision power over any rate and day count, to 1e-35', () => {
    fc.assert(
      fc.property(rates, fc.integer({ min: 0, max: 3_650 }), (rate, days) => {
        const factor = new Precise(monthlyGrowth(rate)(days).toString());
        const exact = reference(rate, days);
        expect(factor.minus(exact).abs().div(exact).lessThan('1e-35')).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('is exact to the module’s 40 digits on whole months', () => {
    fc.assert(
      fc.property(rates, fc.integer({ min: 0, max: 120 }), (rate, months) => {
        const exact = new Precise(1).plus(rate).pow(months);
        const factor = new Precise(monthlyGrowth(rate)(30 * months).toString());
        // Whole powers by multiplication: at most a unit in the 40th digit per step.
        expect(
          factor
            .minus(exact)
            .abs()
            .div(exact)
            .lessThan(`${months + 1}e-40`),
        ).toBe(true);
        if (months === 1) expect(factor.eq(new Precise(1).plus(rate))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
