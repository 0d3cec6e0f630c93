import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays } from '../../src/domain/business-date.js';
import { simulateLoan } from '../../src/domain/credit/simulation.js';
import {
  amountDue,
  payoffQuote,
  presentValue,
  type Installment,
  type LateChargeRates,
} from '../../src/domain/loans/repayment.js';
import { decreeIof } from '../helpers/iof.js';

/** §12's defaults: LATE_FEE_RATE 0.02, LATE_INTEREST_MONTHLY_RATE 0.01. */
const rates: LateChargeRates = { feeRate: '0.02', monthlyInterestRate: '0.01' };

const row = (installment_amount: number, due_date: string, number = 1): Installment => ({
  number,
  due_date,
  installment_amount,
});

describe('late charges, against published worked examples', () => {
  /**
   * Vivaprev, "Juros de mora e multa de mora: entenda o que são" (20/11/2024),
   * https://vivaprev.com.br/2024/11/20/juros-de-mora-e-multa-de-mora-entenda-o-que-sao
   * A R$ 3,000.00 bill due on 10 November paid on the 20th, 10 days late: late fee 2 % = R$ 60.00,
   * late interest 1 % a month pro rata = R$ 10.00, R$ 3,070.00 in all.
   */
  it('R$ 3,000.00 ten days late owes R$ 3,070.00', () => {
    expect(amountDue(row(300_000, '2026-11-10'), '2026-11-20', rates)).toEqual({
      amount: 307_000,
      lateFee: 6_000,
      lateInterest: 1_000,
      daysLate: 10,
    });
  });

  /**
   * Auditório Ibirapuera, "Como se calcula multa por atraso?" (24/04/2023),
   * https://auditorioibirapuera.com.br/como-se-calcula-multa-por-atraso
   * A month's late interest of R$ 3.00 (1 % of R$ 300.00) over 20 days late: (3 ÷ 30) × 20 =
   * R$ 2.00; the 2 % late fee: R$ 6.00.
   */
  it('R$ 300.00 twenty days late owes R$ 2.00 of interest and a R$ 6.00 fee', () => {
    expect(amountDue(row(30_000, '2026-03-05'), '2026-03-25', rates)).toEqual({
      amount: 30_800,
      lateFee: 600,
      lateInterest: 200,
      daysLate: 20,
    });
  });

  /**
   * Kobana, "Multa e juros de mora", https://ajuda.kobana.com.br/pt-BR/articles/8843476-multa-e-juros-de-mora
   * A R$ 100.00 boleto five days late: fee R$ 2.00; interest (1.00 ÷ 30) × 5 = 0.1666…, which the
   * article truncates to R$ 0.16. The contract rounds each charge half-even (§12): R$ 0.17.
   */
  it('R$ 100.00 five days late: the same formula, rounded half-even rather than truncated', () => {
    const due = amountDue(row(10_000, '2026-01-31'), '2026-02-05', rates);
    expect(due).toEqual({ amount: 10_217, lateFee: 200, lateInterest: 17, daysLate: 5 });
  });

  it('owes the installment alone on or before its due date', () => {
    expect(amountDue(row(67_930, '2026-05-10'), '2026-05-10', rates).amount).toBe(67_930);
    expect(amountDue(row(67_930, '2026-05-10'), '2026-04-01', rates).amount).toBe(67_930);
  });

  it('charges the fee once and the interest by the day, on the installment alone', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.integer({ min: 1, max: 2_000 }),
        (installment, days) => {
          const at = (d: number) =>
            amountDue(row(installment, '2026-01-15'), addDays('2026-01-15', d), rates);
          const due = at(days);
          expect(due.daysLate).toBe(days);
          expect(due.lateFee).toBe(at(1).lateFee);
          expect(at(days + 1).lateInterest).toBeGreaterThanOrEqual(due.lateInterest);
          // Simple interest: never more than the exact pro rata figure rounded up.
          expect(Math.abs(due.lateInterest * 3000 - installment * days)).toBeLessThanOrEqual(1500);
          expect(due.amount).toBe(installment + due.lateFee + due.lateInterest);
        },
      ),
    );
  });
});

describe('early settlement', () => {
  /**
   * Banco Central do Brasil, Calculadora do Cidadão (see simulation-math.test.ts): R$ 25,000.00
   * over 42 months at 0.629890 % a month → 42 × R$ 679.30. Settled on the release date, with every
   * period 30 days, the rows' present values add back up to the amount financed — within the
   * installment's own rounding (half a centavo on each of 42 rows, ≈ R$ 0.18 of present value)
   * and each row's (another half centavo each).
   */
  it('settled on the release date, the Banco Central example is worth what was financed', () => {
    const rows = Array.from({ length: 42 }, (_, k) =>
      row(67_930, addDays('2026-01-01', 30 * (k + 1)), k + 1),
    );
    const quote = payoffQuote(rows, '2026-01-01', '0.0062989', rates);
    expect(Math.abs(quote.payoffAmount - 2_500_000)).toBeLessThanOrEqual(18 + 21);
    expect(quote.discountAmount).toBe(42 * 67_930 - quote.payoffAmount);
  });

  it('discounts one installment on calendar days, (1 + i)^(d/30)', () => {
    // R$ 1,000.00 due in 45 days at 2 % a month: 1000 / 1.02^1.5 = 1000 / 1.0301495… = 970.7329… → R$ 970.73.
    expect(presentValue(100_000, '0.02', 45)).toBe(97_073);
    expect(presentValue(100_000, '0.02', 0)).toBe(100_000);
  });

  it('counts a row already due at its amount due, charges included', () => {
    const rows = [row(50_000, '2026-02-10', 1), row(50_000, '2026-03-10', 2)];
    const quote = payoffQuote(rows, '2026-02-25', '0.03', rates);
    expect(quote.rows[0]).toEqual({
      number: 1,
      due_date: '2026-02-10',
      amount_due: 50_000 + 1_000 + 250, // 15 days late: 2 % fee, 0.5 % interest
      present_value: 51_250,
    });
    expect(quote.rows[1]!.present_value).toBe(presentValue(50_000, '0.03', 13));
  });

  const loans = fc.record({
    requestedAmount: fc.integer({ min: 50_000, max: 5_000_000 }),
    installments: fc.integer({ min: 2, max: 48 }),
    rate: fc.constantFrom('0.0099', '0.0199', '0.0349', '0.0599'),
    firstDueIn: fc.integer({ min: 7, max: 45 }),
  });
  const simulate = (x: {
    requestedAmount: number;
    installments: number;
    rate: string;
    firstDueIn: number;
  }) =>
    simulateLoan({
      requestedAmount: x.requestedAmount,
      installments: x.installments,
      monthlyInterestRate: x.rate,
      releaseDate: '2026-11-22',
      firstDueDate: addDays('2026-11-22', x.firstDueIn),
      borrower: 'individual',
      iof: decreeIof,
    });

  it('on a due date, just after that row is paid, costs the schedule’s balance', () => {
    fc.assert(
      fc.property(loans, fc.nat(), (x, pick) => {
        const figures = simulate(x);
        const paid = 1 + (pick % (figures.schedule.length - 1));
        const settled = figures.schedule[paid - 1]!;
        const quote = payoffQuote(
          figures.schedule.slice(paid),
          settled.due_date,
          String(figures.monthly_interest_rate),
          rates,
        );
        // Each remaining row's present value and each row's interest are rounded to the centavo.
        expect(Math.abs(quote.payoffAmount - settled.balance_amount)).toBeLessThanOrEqual(
          figures.schedule.length - paid + 1,
        );
      }),
      { numRuns: 100 },
    );
  });

  it('costs less the earlier it is, and never more than what is left to pay (no fee)', () => {
    fc.assert(
      fc.property(loans, fc.nat(), fc.nat(), (x, a, b) => {
        const figures = simulate(x);
        const first = figures.schedule[0]!.due_date;
        const span = Math.max(1, x.firstDueIn);
        const [early, late] = [a % span, b % span].sort((p, q) => p - q) as [number, number];
        const quote = (days: number) =>
          payoffQuote(
            figures.schedule,
            addDays('2026-11-22', days),
            String(figures.monthly_interest_rate),
            rates,
          );
        expect(quote(early).payoffAmount).toBeLessThanOrEqual(quote(late).payoffAmount);
        expect(quote(late).payoffAmount).toBeLessThanOrEqual(figures.total_amount);
        expect(quote(late).discountAmount).toBeGreaterThanOrEqual(0);
        expect(quote(late).discountAmount).toBe(figures.total_amount - quote(late).payoffAmount);
        // Quoted on the first due date, that row counts in full.
        expect(
          payoffQuote(figures.schedule, first, String(figures.monthly_interest_rate), rates)
            .rows[0]!.present_value,
        ).toBe(figures.schedule[0]!.installment_amount);
      }),
      { numRuns: 100 },
    );
  });
});
