import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  annualInterestRate,
  dueDates,
  iofRate,
  priceInstallment,
  simulateLoan,
  solveCet,
  type IofRates,
  type SimulationInput,
} from '../../src/domain/credit/simulation.js';
import { daysBetween } from '../../src/domain/business-date.js';
import { decreeIof as iof } from '../helpers/iof.js';

const noIof: IofRates = {
  ...iof,
  flat: '0',
  dailyIndividual: '0',
  dailyCompany: '0',
  dailyMei: '0',
};

const simulate = (overrides: Partial<SimulationInput> = {}) =>
  simulateLoan({
    requestedAmount: 1_000_000,
    installments: 12,
    monthlyInterestRate: '0.0199',
    releaseDate: '2026-11-22',
    firstDueDate: '2026-12-22',
    borrower: 'individual',
    iof,
    ...overrides,
  });

describe('published worked examples', () => {
  /**
   * Banco Central do Brasil, "Calculadora do Cidadão — Financiamento com prestações fixas"
   * [CALFW0401], https://www3.bcb.gov.br/CALCIDADAO/publico/exibirFormFinanciamentoPrestacoesFixas.do
   * Two printed results of the official calculator (monthly periods, first installment a month
   * after the release, 6-decimal rates):
   * - 42 months at 0.629890 % a month on R$ 25,000.00 → installment R$ 679.30, total R$ 28,530.60
   *   (printout of 20/05/2022, https://pt.scribd.com/document/654722300/BCB-Calculadora-do-cidadao);
   * - 12 months, installment R$ 355.80, financed R$ 1,320.75 → 25.106880 % a month
   *   (printout of 21/07/2019, https://epage.pub/doc/bcb-calculadora-do-cidadao-35622qnrew).
   * The calculator works on equal monthly periods: the textbook Price installment, which ours
   * reduces to when every period is 30 days.
   */
  it('the Price installment matches the Banco Central calculator', () => {
    expect(priceInstallment(2_500_000, '0.0062989', 42)).toBe(67_930);
    expect(42 * priceInstallment(2_500_000, '0.0062989', 42)).toBe(2_853_060);
    expect(priceInstallment(132_075, '0.2510688', 12)).toBe(35_580);
  });

  it('the rate solver recovers the calculator’s rate from the amount and the installments', () => {
    // The calculator's second printout solved for the rate; the CET solver does the same on
    // 30-day periods, so its annual rate is the monthly one compounded over 365/30 periods.
    const flows = Array.from({ length: 12 }, (_, j) => ({ amount: 35_580, days: 30 * (j + 1) }));
    const annual = solveCet(132_075, flows);
    const monthly = annual.plus(1).pow(new Decimal(30).div(365)).minus(1);
    expect(monthly.toDecimalPlaces(8).toNumber()).toBeCloseTo(0.2510688, 7);
  });

  /**
   * XP Investimentos, "O que é a modalidade IOF Financiado presente nas operações de crédito?"
   * (updated 22/09/2022), https://atendimento-hub.xpi.com.br/artigo/2202-o-que-e-a-modalidade-iof-financiado-presente-nas-operacoes-de-credito
   * A credit of R$ 100,000.00 to an individual repaid at once: IOF R$ 1,856.00 over 180 days
   * (0.38 % + 0.0082 % a day), R$ 3,373.00 over 365 days, and the same R$ 3,373.00 over 730 days,
   * the daily part being capped at 365 days. (XP then charges the contract rate on the IOF; our
   * contract instead grosses the principal up by τ, so the test stops at the IOF rate itself.)
   */
  it('the IOF rate matches a lender’s worked example, capped at 365 days', () => {
    const single = [new Decimal(1)];
    const iofOn = (days: number) =>
      iofRate(single, [days], iof.flat, iof.dailyIndividual).times(10_000_000).toNumber();
    expect(iofOn(180)).toBe(185_600);
    expect(iofOn(365)).toBe(337_300);
    expect(iofOn(730)).toBe(337_300);
  });

  /**
   * Resolução CMN 4.881/2020, art. 4 (https://www.bcb.gov.br/estabilidadefinanceira/exibenormativo?tipo=Resolu%C3%A7%C3%A3o%20CMN&numero=4881):
   * the CET is the annual rate solving Σ FC_j / (1 + CET)^((d_j − d_0)/365) = FC_0. A single
   * payment makes it closed-form: R$ 1,000.00 released, R$ 1,100.00 paid 365 days later → 10 %.
   */
  it('the CET of a single payment a year later is its plain yield', () => {
    expect(
      solveCet(100_000, [{ amount: 110_000, days: 365 }])
        .toDecimalPlaces(10)
        .toNumber(),
    ).toBe(0.1);
  });
});

describe('the schedule on real dates', () => {
  it('prices R$ 10,000 over 12 months at 1.99 % a month, every figure consistent', () => {
    const s = simulate();
    expect(s.annual_interest_rate).toBe(0.2668);
    expect(s.principal_amount).toBe(s.requested_amount + s.iof_amount);
    expect(s.installment_amount).toBe(s.schedule[0]!.installment_amount);
    expect(s.schedule.at(-1)!.balance_amount).toBe(0);
    // Real months average 30.4 days, so the installment sits a little above the textbook one
    // for 30-day months (R$ 966.10 against R$ 964.84 here) — and never below it.
    const textbook = priceInstallment(s.principal_amount, '0.0199', 12);
    expect(s.installment_amount).toBeGreaterThan(textbook);
    expect(s.installment_amount / textbook).toBeLessThan(1.002);
    expect(s.cet_annual).toBeGreaterThan(s.annual_interest_rate);
  });

  it('with no IOF and 30-day periods the CET is the contract rate on a 365-day year', () => {
    // 30-day gaps: February aside, pick dates 30 days apart by hand.
    const s = simulate({
      iof: noIof,
      installments: 1,
      releaseDate: '2026-01-01',
      firstDueDate: '2026-01-31',
    });
    expect(s.iof_amount).toBe(0);
    const expected = new Decimal('1.0199').pow(new Decimal(365).div(30)).minus(1);
    expect(Math.abs(s.cet_annual - expected.toNumber())).toBeLessThanOrEqual(0.0001);
  });

  it('handles a zero rate, a single installment and a 420-installment loan', () => {
    const zero = simulate({
      monthlyInterestRate: '0',
      iof: noIof,
      installments: 4,
      requestedAmount: 1_000,
    });
    expect(zero.schedule.map((r) => r.installment_amount)).toEqual([250, 250, 250, 250]);
    expect(zero.total_interest_amount).toBe(0);
    const one = simulate({ installments: 1 });
    expect(one.schedule[0]!.principal_amount).toBe(one.principal_amount);
    const long = simulate({ installments: 420 });
    expect(long.schedule).toHaveLength(420);
    expect(long.schedule.reduce((sum, r) => sum + r.principal_amount, 0)).toBe(
      long.principal_amount,
    );
  });

  it('caps the IOF days at 365: every row due after a year adds the same daily IOF', () => {
    const tau = (n: number) => simulate({ installments: n, iof: { ...iof, flat: '0' } }).iof_amount;
    // Longer loans pay more IOF only through rows due within the first year.
    expect(tau(24)).toBeLessThan(tau(12) * 2);
  });

  it('prices an MEI at the MEI daily rate up to R$ 30,000 of principal, at the company rate above', () => {
    const small = simulate({ borrower: 'mei', requestedAmount: 2_000_000 });
    const smallIndividual = simulate({ borrower: 'individual', requestedAmount: 2_000_000 });
    expect(small.iof_amount).toBeLessThan(smallIndividual.iof_amount);
    const large = simulate({ borrower: 'mei', requestedAmount: 3_500_000 });
    const largeIndividual = simulate({ borrower: 'individual', requestedAmount: 3_500_000 });
    expect(large.principal_amount).toBeGreaterThan(3_000_000);
    expect(large.iof_amount).toBe(largeIndividual.iof_amount); // company rate = individual rate here
  });
});

describe('calendar', () => {
  it('clamps month-end due dates and counts calendar days', () => {
    expect(dueDates('2027-01-31', 4)).toEqual([
      '2027-01-31',
      '2027-02-28',
      '2027-03-31',
      '2027-04-30',
    ]);
    expect(dueDates('2028-01-31', 2)).toEqual(['2028-01-31', '2028-02-29']);
    expect(dueDates('2026-12-15', 2)).toEqual(['2026-12-15', '2027-01-15']);
    expect(daysBetween('2026-11-22', '2026-12-22')).toBe(30);
    expect(daysBetween('2027-02-01', '2027-03-01')).toBe(28);
  });

  it('annualises the monthly rate to 4 decimals', () => {
    expect(annualInterestRate('0.0199')).toBe(0.2668);
    expect(annualInterestRate('0.0349')).toBe(0.5093);
    expect(annualInterestRate('0')).toBe(0);
  });
});

describe('properties', () => {
  const rate = fc.constantFrom('0.0099', '0.0199', '0.0249', '0.0299', '0.0349', '0.0599');
  const inputs = fc.record({
    requestedAmount: fc.integer({ min: 50_000, max: 10_000_000 }),
    installments: fc.integer({ min: 1, max: 60 }),
    monthlyInterestRate: rate,
    firstDueOffset: fc.integer({ min: 7, max: 45 }),
    releaseDay: fc.integer({ min: 0, max: 365 }),
    borrower: fc.constantFrom('individual' as const, 'mei' as const),
  });
  const build = (x: {
    requestedAmount: number;
    installments: number;
    monthlyInterestRate: string;
    firstDueOffset: number;
    releaseDay: number;
    borrower: 'individual' | 'mei';
  }): SimulationInput => {
    const release = new Date(Date.UTC(2026, 0, 1 + x.releaseDay));
    const first = new Date(release.getTime() + x.firstDueOffset * 86_400_000);
    return {
      requestedAmount: x.requestedAmount,
      installments: x.installments,
      monthlyInterestRate: x.monthlyInterestRate,
      releaseDate: release.toISOString().slice(0, 10),
      firstDueDate: first.toISOString().slice(0, 10),
      borrower: x.borrower,
      iof,
    };
  };

  it('principal parts sum exactly to the principal; balances end at 0; amounts are integers', () => {
    fc.assert(
      fc.property(inputs, (x) => {
        const s = simulateLoan(build(x));
        const sum = (pick: (r: (typeof s.schedule)[number]) => number) =>
          s.schedule.reduce((total, r) => total + pick(r), 0);
        expect(sum((r) => r.principal_amount)).toBe(s.principal_amount);
        expect(sum((r) => r.installment_amount)).toBe(s.total_amount);
        expect(sum((r) => r.interest_amount)).toBe(s.total_interest_amount);
        expect(s.schedule.at(-1)!.balance_amount).toBe(0);
        expect(s.principal_amount).toBe(s.requested_amount + s.iof_amount);
        for (const row of s.schedule) {
          expect(row.installment_amount).toBe(row.principal_amount + row.interest_amount);
          for (const value of Object.values(row))
            if (typeof value === 'number') expect(Number.isInteger(value)).toBe(true);
        }
        // Every row but the last charges the same installment; the last absorbs the rounding of
        // the installment (at most half a centavo a row, accrued at the contract rate) and of each
        // row's interest.
        const i = new Decimal(x.monthlyInterestRate);
        const accrual = i
          .plus(1)
          .pow(x.installments + 2)
          .minus(1)
          .div(i)
          .toNumber();
        expect(
          Math.abs(s.schedule.at(-1)!.installment_amount - s.installment_amount),
        ).toBeLessThanOrEqual(accrual + s.installments);
      }),
      { numRuns: 150 },
    );
  });

  it('τ does not depend on the amount within one rate regime', () => {
    fc.assert(
      fc.property(inputs, fc.integer({ min: 50_000, max: 10_000_000 }), (x, other) => {
        const a = simulateLoan({ ...build(x), borrower: 'individual' });
        const b = simulateLoan({ ...build(x), borrower: 'individual', requestedAmount: other });
        // iof / principal agrees to the rounding of one centavo on each principal.
        const tauA = a.iof_amount / a.principal_amount;
        const tauB = b.iof_amount / b.principal_amount;
        expect(Math.abs(tauA - tauB)).toBeLessThan(1 / a.principal_amount + 1 / b.principal_amount);
      }),
      { numRuns: 100 },
    );
  });

  it('with IOF, the CET is at least the annual equivalent of the monthly rate', () => {
    fc.assert(
      fc.property(inputs, (x) => {
        const s = simulateLoan(build(x));
        // The schedule compounds per day as (1+i)^(d/30): on a 365-day year that is (1+i)^(365/30).
        const contract = new Decimal(1)
          .plus(x.monthlyInterestRate)
          .pow(new Decimal(365).div(30))
          .minus(1);
        expect(s.cet_annual).toBeGreaterThanOrEqual(
          contract.toDecimalPlaces(4).toNumber() - 0.0001,
        );
        expect(s.cet_annual).toBeGreaterThanOrEqual(s.annual_interest_rate);
      }),
      { numRuns: 100 },
    );
  });

  it('month-end due dates clamp and never skip a month', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2026, max: 2040 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 31 }),
        fc.integer({ min: 1, max: 48 }),
        (year, month, day, count) => {
          const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
          const first = `${year}-${String(month).padStart(2, '0')}-${String(Math.min(day, lastDay)).padStart(2, '0')}`;
          const dates = dueDates(first, count);
          dates.forEach((date, k) => {
            const [y, m, d] = date.split('-').map(Number) as [number, number, number];
            expect((y - year) * 12 + (m - month)).toBe(k);
            // On the first due date's day, or the month's last day when the month is shorter.
            expect(d).toBe(Math.min(day, lastDay, new Date(Date.UTC(y, m, 0)).getUTCDate()));
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});
