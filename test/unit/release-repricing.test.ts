import { Decimal as DecimalJs } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays, daysBetween } from '../../src/domain/business-date.js';
import {
  lastReleaseDate,
  pricedIofDailyRate,
  ReleaseRepricingInputError,
  repriceForRelease,
  type ReleaseTerms,
} from '../../src/domain/credit/release-repricing.js';
import {
  simulateLoan,
  type SimulationFigures,
  type SimulationInput,
} from '../../src/domain/credit/simulation.js';
import { decreeIof as iof, repricedPrincipalByHand } from '../helpers/iof.js';

/** The test's own decimals: 40 digits, half-even, independent of the module's setup. */
const Decimal = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_EVEN });
type Decimal = InstanceType<typeof Decimal>;
const halfEven = (value: Decimal) => value.toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber();

const input: SimulationInput = {
  requestedAmount: 1_000_000,
  installments: 12,
  monthlyInterestRate: '0.0199',
  releaseDate: '2026-11-22',
  firstDueDate: '2026-12-22',
  borrower: 'individual',
  iof,
};

const termsFor = (x: SimulationInput, figures: SimulationFigures, releaseDate: string) => ({
  releaseDate,
  monthlyInterestRate: x.monthlyInterestRate,
  iofFlatRate: x.iof.flat,
  iofDailyRate: pricedIofDailyRate(x.borrower, figures.principal_amount, x.iof),
});

const repriced = (figures: SimulationFigures, terms: ReleaseTerms) =>
  repriceForRelease(figures, terms);

const principalByHand = repricedPrincipalByHand;

const sum = (
  figures: SimulationFigures,
  pick: (row: SimulationFigures['schedule'][number]) => number,
) => figures.schedule.reduce((total, row) => total + pick(row), 0);

describe('release on the priced date', () => {
  it('leaves the figures as they are on the release date, or before it', () => {
    const figures = simulateLoan(input);
    for (const date of [input.releaseDate, addDays(input.releaseDate, -2)]) {
      const outcome = repriced(figures, termsFor(input, figures, date));
      expect(outcome.figures).toEqual(figures);
      expect(outcome.row1After).toEqual(outcome.row1Before);
      expect(outcome.interestCredit).toBe(0);
      expect(outcome.iofCredit).toBe(0);
    }
  });
});

describe('release three days late (R$ 10,000, 12 × 1.99 %, individual)', () => {
  const before = simulateLoan(input);
  const released = addDays(input.releaseDate, 3);
  const outcome = repriced(before, termsFor(input, before, released));
  const after = outcome.figures;

  it('charges row 1 interest from the actual release, by the hand formula', () => {
    const days = daysBetween(released, before.first_due_date);
    expect(days).toBe(27);
    const growth = new Decimal('1.0199').pow(new Decimal(days).div(30)).minus(1);
    expect(after.schedule[0]!.interest_amount).toBe(
      halfEven(new Decimal(after.principal_amount).times(growth)),
    );
    expect(outcome.interestCredit).toBe(
      before.schedule[0]!.interest_amount - after.schedule[0]!.interest_amount,
    );
    expect(outcome.interestCredit).toBeGreaterThan(0);
  });

  it('recomputes the IOF on the actual days, on the repriced amortization of each row', () => {
    expect(after.principal_amount).toBe(
      principalByHand(before, released, iof.flat, iof.dailyIndividual),
    );
    expect(after.iof_amount).toBe(after.principal_amount - after.requested_amount);
    expect(after.iof_amount).toBeLessThan(before.iof_amount);
    expect(outcome.iofCredit).toBe(before.iof_amount - after.iof_amount);
  });

  it('lowers row 1 by both credits and leaves the rest of the schedule as it was', () => {
    const [row1Before, ...restBefore] = before.schedule;
    const [row1After, ...restAfter] = after.schedule;
    expect(outcome.row1Before).toEqual(row1Before);
    expect(outcome.row1After).toEqual(row1After);
    expect(row1Before!.installment_amount - row1After!.installment_amount).toBe(
      outcome.interestCredit + outcome.iofCredit,
    );
    expect(row1Before!.principal_amount - row1After!.principal_amount).toBe(outcome.iofCredit);
    expect(row1After!.installment_amount).toBe(
      row1After!.principal_amount + row1After!.interest_amount,
    );
    expect(row1After!.balance_amount).toBe(row1Before!.balance_amount);
    expect(restAfter).toEqual(restBefore);
  });

  it('keeps the totals consistent and moves the release date', () => {
    expect(sum(after, (row) => row.principal_amount)).toBe(after.principal_amount);
    expect(sum(after, (row) => row.installment_amount)).toBe(after.total_amount);
    expect(sum(after, (row) => row.interest_amount)).toBe(after.total_interest_amount);
    expect(after.total_amount).toBe(
      before.total_amount - outcome.interestCredit - outcome.iofCredit,
    );
    // The regular installment stays: row 1 alone is lowered.
    expect(after.installment_amount).toBe(before.installment_amount);
    expect(after.schedule[1]!.installment_amount).toBe(before.installment_amount);
    expect(after.release_date).toBe(released);
    expect(after.first_due_date).toBe(before.first_due_date);
    expect(after.monthly_interest_rate).toBe(before.monthly_interest_rate);
    expect(after.annual_interest_rate).toBe(before.annual_interest_rate);
  });

  it('solves the CET again on the flows counted from the actual release', () => {
    // Σ installment_j / (1 + r)^(d_j/365) falls through the requested amount within the
    // reported rate's half-unit of the 4th decimal, with d_j counted from D.
    const valueAt = (rate: Decimal) =>
      after.schedule.reduce(
        (total, row) =>
          total.plus(
            new Decimal(row.installment_amount).div(
              rate.plus(1).pow(new Decimal(daysBetween(released, row.due_date)).div(365)),
            ),
          ),
        new Decimal(0),
      );
    const cet = new Decimal(after.cet_annual);
    expect(valueAt(cet.minus('0.00005')).greaterThan(after.requested_amount)).toBe(true);
    expect(valueAt(cet.plus('0.00005')).lessThan(after.requested_amount)).toBe(true);
    expect(after.cet_monthly).toBe(
      cet.plus(1).pow(new Decimal(1).div(12)).minus(1).toDecimalPlaces(4).toNumber(),
    );
    // The borrower pays less, yet the CET rises a hair: interest and the daily IOF shrink with
    // the days, but the flat 0.38 % IOF is now spread over three days fewer.
    expect(after.total_amount).toBeLessThan(before.total_amount);
    expect(after.cet_annual).toBeGreaterThan(before.cet_annual);
  });

  it('pins the example', () => {
    expect(outcome.row1Before).toMatchObject({
      installment_amount: 96_610,
      principal_amount: 76_292,
      interest_amount: 20_318,
    });
    expect(outcome.row1After).toMatchObject({
      installment_amount: 94_302,
      principal_amount: 76_039,
      interest_amount: 18_263,
    });
    expect([outcome.interestCredit, outcome.iofCredit]).toEqual([2_055, 253]);
    expect([before.iof_amount, after.iof_amount]).toEqual([20_980, 20_727]);
    expect([before.cet_annual, after.cet_annual]).toEqual([0.3228, 0.3229]);
  });
});

describe('release window', () => {
  it('ends 7 calendar days before the first due date', () => {
    expect(lastReleaseDate('2026-12-22')).toBe('2026-12-15');
    expect(lastReleaseDate('2027-03-03')).toBe('2027-02-24');
  });
});

describe('money confirmed after the release window (claimed in time)', () => {
  // The review's case: claimed in time, the payout confirmed 4 days before the first due date.
  // It used to be priced as released on the window's last day (3 days before the money arrived).
  const before = simulateLoan(input);
  const released = addDays(input.firstDueDate, -4);
  const outcome = repriced(before, termsFor(input, before, released));
  const after = outcome.figures;

  it('is priced from the day the money arrived: 4 days of interest on row 1', () => {
    expect(after.release_date).toBe(released);
    const growth = new Decimal('1.0199').pow(new Decimal(4).div(30)).minus(1);
    expect(after.schedule[0]!.interest_amount).toBe(
      halfEven(new Decimal(after.principal_amount).times(growth)),
    );
    expect(after.principal_amount).toBe(
      principalByHand(before, released, iof.flat, iof.dailyIndividual),
    );
    // As priced on the window's last day (7 days), row 1 would charge 4,696 centavos and the IOF
    // 19,017: the borrower paid for three days without the money.
    expect([after.schedule[0]!.interest_amount, after.iof_amount]).toEqual([2_680, 18_794]);
  });

  it('leaves the CET as priced, and says so, when day-0 flows alone exceed what was released', () => {
    const once = simulateLoan({ ...input, installments: 1 });
    const late = repriced(once, termsFor(input, once, input.firstDueDate));
    expect(late.figures.schedule[0]!.interest_amount).toBe(0);
    expect(late.figures.cet_annual).toBe(once.cet_annual);
    expect(late.warning).toMatch(/CET is left as priced/);
  });

  it('counts no days for a row the money reached on or after its due date', () => {
    const late = repriced(before, termsFor(input, before, addDays(input.firstDueDate, 2)));
    expect(late.figures.schedule[0]!.interest_amount).toBe(0);
    expect(late.figures.principal_amount).toBe(
      principalByHand(before, addDays(input.firstDueDate, 2), iof.flat, iof.dailyIndividual),
    );
    expect(late.figures.schedule.slice(1)).toEqual(before.schedule.slice(1));
  });
});

describe('IOF on the repriced amortization (the review’s R$ 1,000,000, 12 × 3.49 %, 38 days late)', () => {
  const loan: SimulationInput = {
    ...input,
    requestedAmount: 100_000_000,
    monthlyInterestRate: '0.0349',
    firstDueDate: addDays(input.releaseDate, 45),
  };
  const before = simulateLoan(loan);
  const released = addDays(loan.releaseDate, 38);
  const after = repriced(before, termsFor(loan, before, released)).figures;

  it('finances the IOF the decree asks on each row’s principal as repriced', () => {
    expect(after.principal_amount).toBe(
      principalByHand(before, released, iof.flat, iof.dailyIndividual),
    );
    // On the priced principal shares scaled to the new principal, the IOF came to 1,967,043
    // centavos: R$ 46.86 less than the tax the lender owes.
    expect(after.iof_amount).toBe(1_971_729);
  });
});

describe('rates that do not fit the loan', () => {
  const figures = simulateLoan(input);
  const terms = termsFor(input, figures, addDays(input.releaseDate, 3));

  it('refuses a daily IOF rate or a monthly rate other than the priced ones', () => {
    expect(() => repriceForRelease(figures, { ...terms, iofDailyRate: iof.dailyMei })).toThrow(
      ReleaseRepricingInputError,
    );
    expect(() => repriceForRelease(figures, { ...terms, monthlyInterestRate: '0.0198' })).toThrow(
      ReleaseRepricingInputError,
    );
    expect(() => repriceForRelease(figures, { ...terms, releaseDate: '2026-11-31' })).toThrow(
      ReleaseRepricingInputError,
    );
  });

  it('finds the daily rate an MEI was priced with, on either side of the limit', () => {
    // A company rate apart from the individual one, so a wrong pick would show.
    const rates = { ...iof, dailyCompany: '0.000041' };
    for (const requestedAmount of [2_000_000, 3_500_000]) {
      const x = { ...input, borrower: 'mei' as const, requestedAmount, iof: rates };
      const mei = simulateLoan(x);
      const daily = pricedIofDailyRate('mei', mei.principal_amount, rates);
      expect(daily).toBe(requestedAmount < 3_000_000 ? rates.dailyMei : rates.dailyCompany);
      expect(repriced(mei, termsFor(x, mei, addDays(x.releaseDate, 3))).iofCredit).toBeGreaterThan(
        0,
      );
    }
  });
});

describe('a row 1 that cannot absorb the credit', () => {
  // 48 × 3.49 % with the first due date 45 days out: row 1 is mostly interest (its principal part
  // is already negative), and released on the window's last day, the credit is larger than row 1.
  const loan: SimulationInput = {
    ...input,
    installments: 48,
    monthlyInterestRate: '0.0349',
    firstDueDate: addDays(input.releaseDate, 45),
  };
  const before = simulateLoan(loan);
  const released = lastReleaseDate(loan.firstDueDate);
  const outcome = repriced(before, termsFor(loan, before, released));
  const after = outcome.figures;

  it('charges nothing on row 1 and carries the rest of the credit to row 2', () => {
    const [row1, row2] = after.schedule;
    // Row 1: 7 days of interest on the new principal, capitalised; nothing to pay.
    const growth1 = new Decimal('1.0349').pow(new Decimal(7).div(30)).minus(1);
    const interest1 = halfEven(new Decimal(after.principal_amount).times(growth1));
    expect(row1).toEqual({
      ...before.schedule[0],
      installment_amount: 0,
      principal_amount: -interest1,
      interest_amount: interest1,
      balance_amount: after.principal_amount + interest1,
    });
    // Row 2: interest on that lower balance, ending on its old balance.
    const gap = daysBetween(row1!.due_date, row2!.due_date);
    const growth2 = new Decimal('1.0349').pow(new Decimal(gap).div(30)).minus(1);
    const interest2 = halfEven(new Decimal(row1!.balance_amount).times(growth2));
    expect(row2!.interest_amount).toBe(interest2);
    expect(row2!.balance_amount).toBe(before.schedule[1]!.balance_amount);
    expect(row2!.installment_amount).toBe(row1!.balance_amount + interest2 - row2!.balance_amount);
    expect(row2!.installment_amount).toBeLessThan(before.schedule[1]!.installment_amount);
    expect(after.schedule.slice(2)).toEqual(before.schedule.slice(2));
    expect(before.total_amount - after.total_amount).toBe(
      outcome.interestCredit + outcome.iofCredit,
    );
    expect(after.installment_amount).toBe(before.installment_amount); // the regular one
  });
});

describe('properties', () => {
  const loans = fc.record({
    requestedAmount: fc.integer({ min: 50_000, max: 10_000_000 }),
    installments: fc.integer({ min: 1, max: 60 }),
    monthlyInterestRate: fc.constantFrom('0', '0.0099', '0.0199', '0.0349', '0.0599'),
    firstDueOffset: fc.integer({ min: 7, max: 45 }),
    releaseDay: fc.integer({ min: 0, max: 365 }),
    borrower: fc.constantFrom('individual' as const, 'mei' as const),
    lateness: fc.double({ min: 0, max: 1, noNaN: true }),
  });

  it('for any release date (in the window, after it, after the first due date), row 1 never rises nor goes negative and the totals hold', () => {
    fc.assert(
      fc.property(loans, (x) => {
        const releaseDate = addDays('2026-01-01', x.releaseDay);
        const loan: SimulationInput = {
          ...input,
          requestedAmount: x.requestedAmount,
          installments: x.installments,
          monthlyInterestRate: x.monthlyInterestRate,
          borrower: x.borrower,
          releaseDate,
          firstDueDate: addDays(releaseDate, x.firstDueOffset),
        };
        const before = simulateLoan(loan);
        // Up to ten days past the first due date: money confirmed late is priced from its day.
        const late = Math.floor(x.lateness * (x.firstDueOffset + 10));
        const outcome = repriced(before, termsFor(loan, before, addDays(releaseDate, late)));
        const after = outcome.figures;
        expect(outcome.interestCredit).toBeGreaterThanOrEqual(0);
        expect(outcome.iofCredit).toBeGreaterThanOrEqual(0);
        // No row rises or goes negative, and together they fall by exactly both credits.
        after.schedule.forEach((row, j) => {
          expect(row.installment_amount).toBeGreaterThanOrEqual(0);
          expect(row.installment_amount).toBeLessThanOrEqual(
            before.schedule[j]!.installment_amount,
          );
          expect(row.installment_amount).toBe(row.principal_amount + row.interest_amount);
        });
        expect(before.total_amount - after.total_amount).toBe(
          outcome.interestCredit + outcome.iofCredit,
        );
        // The row that absorbs the credit (row 1, unless row 1 drops to zero) ends on its old
        // balance, and every row after it is as it was.
        const absorbing = after.schedule.findIndex((row) => row.installment_amount > 0);
        expect(
          after.schedule.slice(0, absorbing).every((row) => row.installment_amount === 0),
        ).toBe(true);
        expect(after.schedule.slice(absorbing + 1)).toEqual(before.schedule.slice(absorbing + 1));
        expect(after.schedule[absorbing]!.balance_amount).toBe(
          before.schedule[absorbing]!.balance_amount,
        );
        expect(outcome.row1Before).toEqual(before.schedule[0]);
        expect(outcome.row1After).toEqual(after.schedule[0]);

        expect(after.principal_amount).toBe(after.requested_amount + after.iof_amount);
        expect(sum(after, (row) => row.principal_amount)).toBe(after.principal_amount);
        expect(sum(after, (row) => row.installment_amount)).toBe(after.total_amount);
        expect(sum(after, (row) => row.interest_amount)).toBe(after.total_interest_amount);
        // The regular installment stays: only the rows that absorb the credit are lowered.
        expect(after.installment_amount).toBe(before.installment_amount);
        expect(after.release_date).toBe(addDays(releaseDate, late));
      }),
      { numRuns: 150 },
    );
  });
});
