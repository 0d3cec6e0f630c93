import { Decimal as DecimalJs } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays, daysBetween } from '../../src/domain/business-date.js';
import { nationalBankHolidays } from '../../src/domain/calendar/bank-holidays.js';
import { isBusinessDay, lastDayWithoutCharges } from '../../src/domain/calendar/business-days.js';
import { simulateLoan, type SimulationFigures } from '../../src/domain/credit/simulation.js';
import {
  allocatePayment,
  isLate,
  isPaid,
  PaymentAboveBalanceError,
  payoffAmount,
  rowAmountDue,
  rowValue,
  startRepayment,
  type Allocation,
  type ApplyTo,
  type Repayment,
  type RepaymentTerms,
  type RowState,
} from '../../src/domain/loans/allocation.js';
import type { Installment, LateChargeRates } from '../../src/domain/loans/repayment.js';
import { decreeIof as iof } from '../helpers/iof.js';

/** The test's own decimals: 40 digits, half-even, independent of the module's setup. */
const Decimal = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_EVEN });
type Decimal = InstanceType<typeof Decimal>;
const halfEven = (value: Decimal) => value.toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber();

/** (1 + i)^(d/30): money's growth over d calendar days at the monthly rate i. */
const growth = (rate: string, days: number) =>
  new Decimal(1).plus(rate).pow(new Decimal(days).div(30));
/** `amount` centavos due `days` ahead, valued today: amount ÷ (1 + i)^(d/30), half-even. */
const presentValue = (amount: DecimalJs.Value, rate: string, days: number) =>
  halfEven(new Decimal(amount).div(growth(rate, days)));
/** Late interest pro rata die: amount × monthly rate × days ÷ 30, half-even. */
const lateInterest = (amount: DecimalJs.Value, days: number, monthly = '0.01') =>
  halfEven(new Decimal(amount).times(monthly).times(days).div(30));

/** §12's defaults: LATE_FEE_RATE 0.02, LATE_INTEREST_MONTHLY_RATE 0.01. */
const rates: LateChargeRates = { feeRate: '0.02', monthlyInterestRate: '0.01' };
const termsAt = (monthlyRate: string): RepaymentTerms => ({ monthlyRate, lateCharges: rates });

const rows = (installment: number, dueDates: string[]): Installment[] =>
  dueDates.map((due_date, k) => ({ number: k + 1, due_date, installment_amount: installment }));
/** Due dates every 30 days after `start`: the calculator's equal monthly periods. */
const every30Days = (start: string, count: number) =>
  Array.from({ length: count }, (_, k) => addDays(start, 30 * (k + 1)));

const paidAtOf = (date: string) => `${date}T15:00:00.000Z`;
const pay = (
  repayment: Repayment,
  amount: number,
  date: string,
  terms: RepaymentTerms,
  applyTo: ApplyTo = 'next',
) => allocatePayment(repayment, { amount, date, paidAt: paidAtOf(date), applyTo }, terms);

const row = (repayment: Repayment, number: number): RowState => {
  const found = repayment.rows.find((r) => r.number === number);
  if (!found) throw new Error(`no row ${number}`);
  return found;
};
const part = (allocation: Allocation, number: number) =>
  allocation.rows.find((p) => p.number === number);
const sumOf = <T>(items: readonly T[], pick: (item: T) => number) =>
  items.reduce((total, item) => total + pick(item), 0);
/** The newest row still owing (the term's end), 0 when none. */
const lastUnpaid = (repayment: Repayment) =>
  Math.max(0, ...repayment.rows.filter((r) => !isPaid(r)).map((r) => r.number));

const weekday = (date: string) => new Date(`${date}T00:00:00Z`).getUTCDay();
const [SUNDAY, MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, SATURDAY] = [0, 1, 2, 3, 4, 5, 6];

describe('present value, against the Banco Central calculator', () => {
  /**
   * Banco Central do Brasil, "Calculadora do Cidadão — Financiamento com prestações fixas"
   * [CALFW0401], https://www3.bcb.gov.br/CALCIDADAO/publico/exibirFormFinanciamentoPrestacoesFixas.do
   * The form's own "Cálculo do valor financiado" example: "Um bem está sendo vendido em 24
   * parcelas fixas R$ 935,00. Sabendo que a taxa de juros anunciada é de 1,99% ao mês, qual o valor
   * do bem?" (as printed on 21/07/2019, https://epage.pub/doc/bcb-calculadora-do-cidadao-35622qnrew).
   * The page poses it without printing the answer; its answer, PV = Σ R ÷ (1 + i)^k =
   * R · (1 − (1 + i)^−n) ÷ i, is computed here: R$ 17,704.57.
   */
  const rate = '0.0199';
  const release = '2027-01-04';
  const schedule = rows(93_500, every30Days(release, 24));

  it('the 24 × R$ 935.00 example at 1.99 % is worth R$ 17,704.57, by both formulas', () => {
    const series = Array.from({ length: 24 }, (_, k) =>
      new Decimal(93_500).div(new Decimal('1.0199').pow(k + 1)),
    ).reduce((total, term) => total.plus(term), new Decimal(0));
    const closed = new Decimal(93_500)
      .times(new Decimal(1).minus(new Decimal('1.0199').pow(-24)))
      .div(rate);
    expect(series.minus(closed).abs().lt('1e-30')).toBe(true);
    expect(halfEven(closed)).toBe(1_770_457);
  });

  it('settled on the release date, the rows are worth their present values, each half-even', () => {
    const repayment = startRepayment(schedule, 1_770_457);
    const payoff = payoffAmount(repayment, release, termsAt(rate));
    const expected = sumOf(schedule, (r) =>
      presentValue(r.installment_amount, rate, daysBetween(release, r.due_date)),
    );
    expect(payoff).toBe(expected);
    // 24 roundings of half a centavo at most, around the calculator's R$ 17,704.57.
    expect(Math.abs(payoff - 1_770_457)).toBeLessThanOrEqual(12);
    for (const r of repayment.rows)
      expect(rowValue(r, release, termsAt(rate))).toBe(
        presentValue(r.installment_amount, rate, daysBetween(release, r.due_date)),
      );
  });

  /**
   * The printout of 20/05/2022 (https://pt.scribd.com/document/654722300/BCB-Calculadora-do-cidadao):
   * 42 × R$ 679.30 at 0.629890 % a month finance R$ 25,000.00. The printed installment is rounded
   * to the centavo (by at most ½ centavo, worth ½ × Σ 1.0062989^−k = 18.4 centavos today) and each
   * row's present value too (42 × ½ centavo): they add up to R$ 25,000.00 within 39 centavos.
   */
  it('the 42 × R$ 679.30 printout at 0.629890 % is worth the R$ 25,000.00 it financed', () => {
    const dates = every30Days('2027-01-04', 42);
    // Principal 0: the payoff is then the rows' values alone (it is never below the principal).
    const repayment = startRepayment(rows(67_930, dates), 0);
    const payoff = payoffAmount(repayment, '2027-01-04', termsAt('0.0062989'));
    expect(payoff).toBe(
      sumOf(dates, (date) => presentValue(67_930, '0.0062989', daysBetween('2027-01-04', date))),
    );
    expect(Math.abs(payoff - 2_500_000)).toBeLessThanOrEqual(39);
  });

  it('one row paid 30 days early costs R$ 935.00 ÷ 1.0199, and the rest is the discount', () => {
    // 93,500 ÷ 1.0199 = 91,675.654… → 91,676 centavos; discount 1,824 (CDC art. 52 §2).
    // The principal: what the rows are worth on the release day.
    const principal = payoffAmount(startRepayment(schedule, 0), release, termsAt(rate));
    const repayment = startRepayment(schedule, principal);
    const early = presentValue(93_500, rate, 30);
    expect(early).toBe(91_676);
    const allocation = pay(repayment, early, release, termsAt(rate));
    expect(allocation.rows).toEqual([
      { number: 1, late_interest: 0, late_fee: 0, installment: 91_676, discount: 1_824 },
    ]);
    expect(allocation.discount).toBe(1_824);
    expect(isPaid(row(allocation.after, 1))).toBe(true);
    expect(row(allocation.after, 1).paid_at).toBe(paidAtOf(release));
    expect(rowAmountDue(row(allocation.after, 1), release, rates)).toBe(0);
    expect(isPaid(row(allocation.after, 2))).toBe(false);
    expect(allocation.finished).toBe(false);
    // On the release day the rows are worth exactly the principal: no interest has accrued yet.
    expect(allocation.principal).toBe(91_676);
    expect(allocation.interest).toBe(0);
  });
});

describe('allocation order (§13: overdue rows first, then the later rows by apply_to)', () => {
  /** Four rows of R$ 1,000.00 at 3 % a month, each due on a business day. */
  const rate = '0.03';
  const terms = termsAt(rate);
  const schedule = rows(100_000, ['2027-01-15', '2027-02-15', '2027-03-15', '2027-04-15']);
  const principal = payoffAmount(startRepayment(schedule, 0), '2026-12-15', terms);
  const fresh = () => startRepayment(schedule, principal);

  /** Paid on Monday 2027-02-22: row 1 is 38 days late, row 2 seven, rows 3 and 4 due later. */
  const date = '2027-02-22';
  const late1 = { interest: lateInterest(100_000, 38), fee: 2_000 };
  const late2 = { interest: lateInterest(100_000, 7), fee: 2_000 };
  const owed1 = 100_000 + late1.interest + late1.fee;
  const owed2 = 100_000 + late2.interest + late2.fee;
  const pv3 = presentValue(100_000, rate, daysBetween(date, '2027-03-15'));
  const pv4 = presentValue(100_000, rate, daysBetween(date, '2027-04-15'));

  it('the scenario: two rows late, two due later', () => {
    for (const due of schedule.map((r) => r.due_date)) expect(isBusinessDay(due)).toBe(true);
    expect(late1).toEqual({ interest: 1_267, fee: 2_000 }); // 1,000 × 1 % × 38 ÷ 30 = 12.666…
    expect(late2).toEqual({ interest: 233, fee: 2_000 }); // 1,000 × 1 % × 7 ÷ 30 = 2.333…
    expect(daysBetween(date, '2027-03-15')).toBe(21);
    expect(daysBetween(date, '2027-04-15')).toBe(52);
    const repayment = fresh();
    expect(rowAmountDue(row(repayment, 1), date, rates)).toBe(owed1);
    expect(rowAmountDue(row(repayment, 2), date, rates)).toBe(owed2);
    // amount_due is not discounted; what settles a later row on the day is.
    expect(rowAmountDue(row(repayment, 3), date, rates)).toBe(100_000);
    expect(rowValue(row(repayment, 3), date, terms)).toBe(pv3);
  });

  it('an overdue row pays its late interest, then its late fee, then its installment', () => {
    const cases = [
      { amount: 1_000, paid: { li: 1_000, fee: 0, inst: 0 }, owes: { li: 267, fee: 2_000 } },
      {
        amount: 1_267 + 1_500,
        paid: { li: 1_267, fee: 1_500, inst: 0 },
        owes: { li: 0, fee: 500 },
      },
      {
        amount: 1_267 + 2_000 + 40_000,
        paid: { li: 1_267, fee: 2_000, inst: 40_000 },
        owes: { li: 0, fee: 0 },
      },
    ];
    for (const { amount, paid, owes } of cases) {
      const allocation = pay(fresh(), amount, date, terms);
      expect(allocation.rows).toEqual([
        {
          number: 1,
          late_interest: paid.li,
          late_fee: paid.fee,
          installment: paid.inst,
          discount: 0,
        },
      ]);
      const after = row(allocation.after, 1);
      expect(after.late_interest_due).toBe(owes.li);
      expect(after.late_fee_due).toBe(owes.fee);
      expect(after.late_interest_from).toBe(date);
      expect(after.paid_amount).toBe(amount);
      expect(isPaid(after)).toBe(false);
      expect(rowAmountDue(after, date, rates)).toBe(owed1 - amount);
      expect(allocation.lateInterest).toBe(paid.li);
      expect(allocation.lateFee).toBe(paid.fee);
    }
  });

  it('rows due by the payment date come first, oldest first, whatever apply_to says', () => {
    for (const [applyTo, laterRow] of [
      ['next', 3],
      ['last', 4],
    ] as const) {
      const allocation = pay(fresh(), owed1 + owed2 + 5_000, date, terms, applyTo);
      expect(allocation.rows.map((p) => p.number)).toEqual([1, 2, laterRow]);
      expect(part(allocation, 1)).toMatchObject({ late_interest: 1_267, late_fee: 2_000 });
      expect(part(allocation, 2)).toMatchObject({ late_interest: 233, late_fee: 2_000 });
      expect(part(allocation, laterRow)!.installment).toBe(5_000);
      expect(isPaid(row(allocation.after, 1))).toBe(true);
      expect(isPaid(row(allocation.after, 2))).toBe(true);
      expect(allocation.lateFee).toBe(4_000);
      expect(allocation.lateInterest).toBe(1_500);
    }
  });

  it('"next" pays the later rows oldest first, each at its present value', () => {
    const allocation = pay(fresh(), owed1 + owed2 + pv3 + 1_000, date, terms, 'next');
    expect(allocation.rows.map((p) => p.number)).toEqual([1, 2, 3, 4]);
    expect(part(allocation, 3)).toEqual({
      number: 3,
      late_interest: 0,
      late_fee: 0,
      installment: pv3,
      discount: 100_000 - pv3,
    });
    // The R$ 10.00 left goes to row 4, carried 52 days to its due date.
    const carried = new Decimal(1_000).times(growth(rate, 52));
    expect(part(allocation, 4)).toEqual({
      number: 4,
      late_interest: 0,
      late_fee: 0,
      installment: 1_000,
      discount: halfEven(carried) - 1_000,
    });
    expect(rowAmountDue(row(allocation.after, 4), date, rates)).toBe(
      halfEven(new Decimal(100_000).minus(carried)),
    );
    expect(lastUnpaid(allocation.after)).toBe(4);
  });

  it('"last" pays the later rows newest first, each at its present value (a shorter term)', () => {
    const allocation = pay(fresh(), owed1 + owed2 + pv4 + 1_000, date, terms, 'last');
    expect(allocation.rows.map((p) => p.number)).toEqual([1, 2, 4, 3]);
    expect(part(allocation, 4)).toMatchObject({ installment: pv4, discount: 100_000 - pv4 });
    const carried = new Decimal(1_000).times(growth(rate, 21));
    expect(part(allocation, 3)).toMatchObject({
      installment: 1_000,
      discount: halfEven(carried) - 1_000,
    });
    expect(isPaid(row(allocation.after, 4))).toBe(true);
    expect(lastUnpaid(allocation.after)).toBe(3);
    expect(allocation.discount).toBe(100_000 - pv4 + halfEven(carried) - 1_000);
  });

  it('a row due on the payment date counts at face value: neither late nor discounted', () => {
    const repayment = fresh();
    const third = row(repayment, 3);
    expect(isLate(third, '2027-03-15')).toBe(false);
    expect(isLate(third, '2027-03-16')).toBe(true);
    expect(rowValue(third, '2027-03-15', terms)).toBe(100_000);
    expect(rowValue(third, '2027-03-14', terms)).toBe(presentValue(100_000, rate, 1));
  });
});

describe('partial payments (§13: a row the amount does not cover is paid in part)', () => {
  it('before its due date, a part is carried to the due date: amount due falls by part × (1 + i)^(d/30)', () => {
    const rate = '0.0199';
    const terms = termsAt(rate);
    const schedule = rows(93_500, ['2027-02-01', '2027-03-01', '2027-04-01']);
    const start = startRepayment(
      schedule,
      payoffAmount(startRepayment(schedule, 0), '2026-12-01', terms),
    );

    // R$ 500.00 paid 45 days early is worth 500 × 1.0199^1.5 on the due date.
    const first = pay(start, 50_000, '2026-12-18', terms);
    const carried1 = new Decimal(50_000).times(growth(rate, 45));
    expect(first.rows).toEqual([
      {
        number: 1,
        late_interest: 0,
        late_fee: 0,
        installment: 50_000,
        discount: halfEven(carried1) - 50_000,
      },
    ]);
    const row1 = row(first.after, 1);
    expect(new Decimal(row1.settled).minus(carried1).abs().lt('1e-30')).toBe(true);
    expect(rowAmountDue(row1, '2026-12-18', rates)).toBe(
      halfEven(new Decimal(93_500).minus(carried1)),
    );
    expect(isPaid(row1)).toBe(false);
    // What settles it now: what is left, discounted again.
    expect(rowValue(row1, '2026-12-18', terms)).toBe(
      presentValue(new Decimal(93_500).minus(carried1), rate, 45),
    );

    // R$ 200.00 more, 15 days early.
    const second = pay(first.after, 20_000, '2027-01-17', terms);
    const carried2 = new Decimal(20_000).times(growth(rate, 15));
    const left = new Decimal(93_500).minus(carried1).minus(carried2);
    expect(rowAmountDue(row(second.after, 1), '2027-01-17', rates)).toBe(halfEven(left));
    expect(second.rows[0]!.discount).toBe(halfEven(carried2) - 20_000);

    // On its due date what is left, rounded, settles it.
    const last = pay(second.after, halfEven(left), '2027-02-01', terms);
    expect(last.rows).toEqual([
      { number: 1, late_interest: 0, late_fee: 0, installment: halfEven(left), discount: 0 },
    ]);
    expect(row(last.after, 1).paid_at).toBe(paidAtOf('2027-02-01'));
    expect(row(last.after, 1).paid_amount).toBe(50_000 + 20_000 + halfEven(left));
    expect(rowAmountDue(row(last.after, 2), '2027-02-01', rates)).toBe(93_500);
  });

  describe('an overdue row paid in part', () => {
    const terms = termsAt('0.02');
    // Due Friday 2027-01-15; paid Thursday 2027-02-04, 20 days late: 1,000 × 1 % × 20 ÷ 30 = 6.666…
    const schedule = rows(100_000, ['2027-01-15', '2027-04-15']);
    const start = startRepayment(schedule, 190_000);
    const firstDate = '2027-02-04';
    const thirtyDaysOn = '2027-03-06';
    const li = lateInterest(100_000, 20);

    it('charges the late fee once, then late interest on what is left from that payment', () => {
      expect(li).toBe(667);
      const first = pay(start, li + 2_000 + 30_000, firstDate, terms);
      expect(first.rows).toEqual([
        { number: 1, late_interest: 667, late_fee: 2_000, installment: 30_000, discount: 0 },
      ]);
      const after = row(first.after, 1);
      expect(after).toMatchObject({
        late_fee_due: 0,
        late_interest_due: 0,
        late_interest_from: firstDate,
        paid_amount: 32_667,
        paid_at: null,
      });
      // Thirty days on: R$ 700.00 left, 1 % on it for 30 days, and no second fee.
      expect(rowAmountDue(after, thirtyDaysOn, rates)).toBe(70_000 + lateInterest(70_000, 30));
      const second = pay(first.after, 70_700, thirtyDaysOn, terms);
      expect(second.rows).toEqual([
        { number: 1, late_interest: 700, late_fee: 0, installment: 70_000, discount: 0 },
      ]);
      expect(row(second.after, 1).paid_at).toBe(paidAtOf(thirtyDaysOn));
    });

    it('keeps an unpaid part of the fee as charged, not recomputed', () => {
      const first = pay(start, li + 500, firstDate, terms);
      expect(row(first.after, 1).late_fee_due).toBe(1_500);
      expect(rowAmountDue(row(first.after, 1), thirtyDaysOn, rates)).toBe(
        100_000 + 1_500 + lateInterest(100_000, 30),
      );
    });

    it('keeps unpaid late interest and accrues the rest from the payment’s date', () => {
      const first = pay(start, 300, firstDate, terms);
      expect(row(first.after, 1)).toMatchObject({
        late_interest_due: 367,
        late_fee_due: 2_000,
        late_interest_from: firstDate,
      });
      expect(rowAmountDue(row(first.after, 1), thirtyDaysOn, rates)).toBe(
        100_000 + 2_000 + 367 + lateInterest(100_000, 30),
      );
    });
  });
});

describe('business days (§13, Lei 7.089/1983): no charges until the next business day', () => {
  const terms = termsAt('0.02');
  const single = (due: string) => startRepayment(rows(100_000, [due]), 98_000);
  /** What a payment of the whole amount due on `date` paid, row 1. */
  const settle = (due: string, date: string) => {
    const repayment = single(due);
    const allocation = pay(repayment, rowAmountDue(row(repayment, 1), date, rates), date, terms);
    expect(allocation.finished).toBe(true);
    return allocation.rows[0]!;
  };
  const noCharges = { late_interest: 0, late_fee: 0, installment: 100_000, discount: 0 };

  it('the dates used here are what the shipped calendar says', () => {
    expect(weekday('2027-03-27')).toBe(SATURDAY);
    expect(weekday('2027-03-28')).toBe(SUNDAY);
    expect(weekday('2027-03-26')).toBe(FRIDAY);
    expect(weekday('2027-03-29')).toBe(MONDAY);
    expect(weekday('2027-03-30')).toBe(TUESDAY);
    expect(weekday('2027-02-08')).toBe(MONDAY);
    expect(weekday('2027-02-10')).toBe(WEDNESDAY);
    expect(weekday('2027-02-11')).toBe(THURSDAY);
    // Good Friday (Easter is 2027-03-28) and Carnival Monday and Tuesday.
    expect(nationalBankHolidays).toEqual(
      expect.arrayContaining(['2027-03-26', '2027-02-08', '2027-02-09']),
    );
    expect(nationalBankHolidays).not.toContain('2027-03-29');
    expect(nationalBankHolidays).not.toContain('2027-02-10');
    expect(lastDayWithoutCharges('2027-03-27')).toBe('2027-03-29');
    expect(lastDayWithoutCharges('2027-03-26')).toBe('2027-03-29');
    expect(lastDayWithoutCharges('2027-02-08')).toBe('2027-02-10');
  });

  it('a row due on Saturday 2027-03-27 paid on Monday owes no late fee or interest', () => {
    expect(rowAmountDue(row(single('2027-03-27'), 1), '2027-03-29', rates)).toBe(100_000);
    expect(settle('2027-03-27', '2027-03-29')).toEqual({ number: 1, ...noCharges });
    expect(settle('2027-03-27', '2027-03-28')).toEqual({ number: 1, ...noCharges });
  });

  it('paid on Tuesday it is late, with late interest counted from the Saturday (3 calendar days)', () => {
    expect(settle('2027-03-27', '2027-03-30')).toEqual({
      number: 1,
      late_interest: lateInterest(100_000, 3), // 1,000 × 1 % × 3 ÷ 30 = 1.00
      late_fee: 2_000,
      installment: 100_000,
      discount: 0,
    });
  });

  it('a row due on Good Friday 2027-03-26 paid on Monday owes nothing extra; on Tuesday, 4 days', () => {
    expect(settle('2027-03-26', '2027-03-29')).toEqual({ number: 1, ...noCharges });
    expect(settle('2027-03-26', '2027-03-30')).toMatchObject({
      late_interest: lateInterest(100_000, 4),
      late_fee: 2_000,
    });
  });

  it('a row due on Carnival Monday 2027-02-08 is paid without charges through Wednesday', () => {
    for (const date of ['2027-02-08', '2027-02-09', '2027-02-10'])
      expect(settle('2027-02-08', date)).toEqual({ number: 1, ...noCharges });
    expect(settle('2027-02-08', '2027-02-11')).toMatchObject({
      late_interest: lateInterest(100_000, 3),
      late_fee: 2_000,
    });
  });

  it('a row due on a business day is late the very next day', () => {
    expect(settle('2027-01-15', '2027-01-16')).toMatchObject({
      late_interest: lateInterest(100_000, 1),
      late_fee: 2_000,
    });
  });

  it('for any due date: free on its last day without charges, charged from the due date after it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5 * 365 }),
        fc.integer({ min: 2_500, max: 10_000_000 }),
        (offset, installment) => {
          const due = addDays('2026-01-01', offset);
          const graceEnd = lastDayWithoutCharges(due);
          expect(isBusinessDay(graceEnd)).toBe(true);
          for (let d = due; d < graceEnd; d = addDays(d, 1)) expect(isBusinessDay(d)).toBe(false);
          const repayment = startRepayment(rows(installment, [due]), installment);
          expect(rowAmountDue(row(repayment, 1), graceEnd, rates)).toBe(installment);
          const dayAfter = addDays(graceEnd, 1);
          expect(rowAmountDue(row(repayment, 1), dayAfter, rates)).toBe(
            installment +
              halfEven(new Decimal(installment).times('0.02')) +
              lateInterest(installment, daysBetween(due, dayAfter)),
          );
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('the payoff amount bounds a payment (§13)', () => {
  const rate = '0.03';
  const terms = termsAt(rate);
  const schedule = rows(100_000, ['2027-01-15', '2027-02-15', '2027-03-15', '2027-04-15']);
  const principal = 380_000;
  const date = '2027-02-22';
  const expectedPayoff =
    100_000 +
    lateInterest(100_000, 38) +
    2_000 +
    100_000 +
    lateInterest(100_000, 7) +
    2_000 +
    presentValue(100_000, rate, 21) +
    presentValue(100_000, rate, 52);

  it('is every late row with its charges plus every later row at its present value', () => {
    expect(payoffAmount(startRepayment(schedule, principal), date, terms)).toBe(expectedPayoff);
  });

  it('refuses a centavo more, naming the payoff amount', () => {
    const repayment = startRepayment(schedule, principal);
    let error: unknown;
    try {
      pay(repayment, expectedPayoff + 1, date, terms);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PaymentAboveBalanceError);
    expect((error as PaymentAboveBalanceError).payoffAmount).toBe(expectedPayoff);
    // Nothing moved.
    expect(repayment).toEqual(startRepayment(schedule, principal));
  });

  it('exactly the payoff amount finishes the loan and pays all the principal', () => {
    for (const applyTo of ['next', 'last'] as const) {
      const allocation = pay(
        startRepayment(schedule, principal),
        expectedPayoff,
        date,
        terms,
        applyTo,
      );
      expect(allocation.finished).toBe(true);
      expect(allocation.after.rows.every(isPaid)).toBe(true);
      expect(allocation.after.principal_outstanding).toBe(0);
      expect(allocation.principal).toBe(principal);
      expect(
        allocation.principal + allocation.interest + allocation.lateFee + allocation.lateInterest,
      ).toBe(expectedPayoff);
      expect(allocation.discount).toBe(
        200_000 - presentValue(100_000, rate, 21) - presentValue(100_000, rate, 52),
      );
      expect(payoffAmount(allocation.after, date, terms)).toBe(0);
      // A finished loan takes no more money.
      expect(() => pay(allocation.after, 1, date, terms)).toThrow(PaymentAboveBalanceError);
    }
  });

  /**
   * On the release day the rows are worth the principal only within their roundings — for about a
   * third of simulated loans a centavo or two less. The payoff is never below the principal still
   * owed (the discount is interest not charged, never principal), so paying it off that day books
   * all the principal and no negative interest.
   */
  it('a payoff on the release day books no negative interest', () => {
    const release = '2026-03-03';
    const figures = simulateLoan({
      requestedAmount: 65_838,
      installments: 5,
      monthlyInterestRate: '0.0112',
      releaseDate: release,
      firstDueDate: addDays(release, 9),
      borrower: 'individual',
      iof,
    });
    const repayment = startRepayment(figures.schedule, figures.principal_amount);
    const payoff = payoffAmount(repayment, release, termsAt('0.0112'));
    const allocation = pay(repayment, payoff, release, termsAt('0.0112'));
    expect(allocation.finished).toBe(true);
    expect(allocation.after.principal_outstanding).toBe(0);
    expect(allocation.principal + allocation.interest).toBe(payoff);
    expect(allocation.interest).toBeGreaterThanOrEqual(0);
  });

  it('paying every row its value that day leaves the rounding shortfall owed, and only the payoff finishes', () => {
    // Found over HTTP: 3 rows of R$ 178.48 on R$ 504.47 at 2.99 % paid on the release day, each
    // at its value, summed to R$ 504.46; the last payment finished the loan with −1 centavo of
    // interest. Now the last row keeps the centavo, at face value, until the payoff pays it.
    const release = '2026-11-25';
    const figures = simulateLoan({
      requestedAmount: 50_000,
      installments: 3,
      monthlyInterestRate: '0.0299',
      releaseDate: release,
      firstDueDate: addDays(release, 30),
      borrower: 'individual',
      iof,
    });
    const terms = termsAt('0.0299');
    let repayment = startRepayment(figures.schedule, figures.principal_amount);
    const values = repayment.rows.map((r) => rowValue(r, release, terms));
    const shortfall = figures.principal_amount - values.reduce((a, b) => a + b, 0);
    expect(shortfall).toBeGreaterThan(0); // the case at hand
    for (const value of values) repayment = pay(repayment, value, release, terms).after;
    expect(repayment.rows.filter((r) => !isPaid(r)).map((r) => r.number)).toEqual([3]);
    expect(rowAmountDue(row(repayment, 3), release, rates)).toBe(shortfall);
    expect(repayment.principal_outstanding).toBe(shortfall);
    expect(payoffAmount(repayment, release, terms)).toBe(shortfall);
    const last = pay(repayment, shortfall, release, terms);
    expect(last).toMatchObject({ finished: true, principal: shortfall, interest: 0 });
    expect(last.after.principal_outstanding).toBe(0);
  });

  it('refuses a non-positive or non-integer amount with a RangeError', () => {
    const repayment = startRepayment(schedule, principal);
    for (const amount of [0, -1, -100_000, 0.5, 1_000.25, Number.NaN, Infinity, 2 ** 53])
      expect(() => pay(repayment, amount, date, terms)).toThrow(RangeError);
  });
});

/**
 * Realistic loans (`simulateLoan`: R$ 500 to R$ 50,000, 3 to 36 rows, 0.5 % to 8 % a month, the first
 * due date 7 to 60 days after the release) and payments of random amounts on dates moving forward,
 * some late. A payment values each unpaid row at (1 + i)^(d/30) with 40 digits (about 0.2 ms a row),
 * so the runs are kept modest for the file to stay quick.
 */
describe('properties over realistic loans', () => {
  const loans = fc.record({
    requestedAmount: fc.integer({ min: 50_000, max: 5_000_000 }),
    installments: fc.integer({ min: 3, max: 36 }),
    /** Basis points a month: 0.50 % to 8.00 %. */
    rateBp: fc.integer({ min: 50, max: 800 }),
    releaseDay: fc.integer({ min: 0, max: 3 * 365 }),
    firstDueIn: fc.integer({ min: 7, max: 60 }),
  });
  type LoanCase = typeof loans extends fc.Arbitrary<infer T> ? T : never;

  interface Loan {
    figures: SimulationFigures;
    terms: RepaymentTerms;
    release: string;
    start: Repayment;
  }
  const loanOf = (x: LoanCase): Loan => {
    const release = addDays('2026-01-01', x.releaseDay);
    const monthlyRate = new Decimal(x.rateBp).div(10_000).toString();
    const figures = simulateLoan({
      requestedAmount: x.requestedAmount,
      installments: x.installments,
      monthlyInterestRate: monthlyRate,
      releaseDate: release,
      firstDueDate: addDays(release, x.firstDueIn),
      borrower: 'individual',
      iof,
    });
    return {
      figures,
      terms: termsAt(monthlyRate),
      release,
      start: startRepayment(figures.schedule, figures.principal_amount),
    };
  };

  /** A payment: days after the previous one (some late), and how much. */
  const steps = fc.record({
    gap: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 70 })),
    /** The oldest row's amount due, or a share of what all rows owe at face value. */
    kind: fc.constantFrom('share', 'share', 'row'),
    /** Per mille. */
    share: fc.oneof(fc.integer({ min: 1, max: 150 }), fc.integer({ min: 1, max: 1000 })),
    applyTo: fc.constantFrom<ApplyTo>('next', 'last'),
  });
  type Step = typeof steps extends fc.Arbitrary<infer T> ? T : never;

  /** What the step asks for, capped at the payoff amount (which the refusal names). */
  const payStep = (step: Step, repayment: Repayment, date: string, terms: RepaymentTerms) => {
    const oldest = repayment.rows.find((r) => !isPaid(r))!;
    const face = sumOf(repayment.rows, (r) => rowAmountDue(r, date, rates));
    const wanted =
      step.kind === 'row'
        ? rowAmountDue(oldest, date, rates)
        : Math.max(1, Math.floor((face * step.share) / 1000));
    try {
      return { amount: wanted, allocation: pay(repayment, wanted, date, terms, step.applyTo) };
    } catch (error) {
      if (!(error instanceof PaymentAboveBalanceError)) throw error;
      const amount = error.payoffAmount;
      return { amount, allocation: pay(repayment, amount, date, terms, step.applyTo) };
    }
  };

  /** Plays the payments in order (each on or after the previous one's date) until the loan ends. */
  const replay = (
    loan: Loan,
    plan: readonly Step[],
    check?: (
      before: Repayment,
      paid: { amount: number; allocation: Allocation },
      date: string,
      applyTo: ApplyTo,
    ) => void,
  ) => {
    let repayment = loan.start;
    let date = loan.release;
    for (const step of plan) {
      if (repayment.rows.every(isPaid)) break;
      date = addDays(date, step.gap);
      const paid = payStep(step, repayment, date, loan.terms);
      check?.(repayment, paid, date, step.applyTo);
      repayment = paid.allocation.after;
    }
    return { repayment, date };
  };

  it('conserves cash: the parts add up to the payment, in §13 order, each valued by hand', () => {
    fc.assert(
      fc.property(loans, fc.array(steps, { minLength: 1, maxLength: 6 }), (x, plan) => {
        const loan = loanOf(x);
        const rate = loan.terms.monthlyRate;
        const { repayment, date: latest } = replay(loan, plan, (before, paid, date, applyTo) => {
          const { amount, allocation } = paid;
          const parts = allocation.rows;
          expect(sumOf(parts, (p) => p.late_interest + p.late_fee + p.installment)).toBe(amount);
          expect(allocation.principal + allocation.interest).toBe(
            sumOf(parts, (p) => p.installment),
          );
          expect(allocation.lateFee).toBe(sumOf(parts, (p) => p.late_fee));
          expect(allocation.lateInterest).toBe(sumOf(parts, (p) => p.late_interest));
          expect(allocation.discount).toBe(sumOf(parts, (p) => p.discount));
          expect(allocation.principal).toBeGreaterThanOrEqual(0);
          expect(allocation.interest).toBeGreaterThanOrEqual(0);
          for (const p of parts)
            for (const value of [p.late_interest, p.late_fee, p.installment, p.discount])
              expect(value).toBeGreaterThanOrEqual(0);

          // Order: the rows due by the date oldest first, then the later ones by apply_to.
          const dueBy = (p: { number: number }) => row(before, p.number).due_date <= date;
          const due = parts.filter(dueBy).map((p) => p.number);
          const later = parts.filter((p) => !dueBy(p)).map((p) => p.number);
          expect(parts.map((p) => p.number)).toEqual([
            ...[...due].sort((a, b) => a - b),
            ...[...later].sort((a, b) => (applyTo === 'next' ? a - b : b - a)),
          ]);
          // Every row but the one the money ran out on is settled.
          for (const p of parts.slice(0, -1))
            expect(isPaid(row(allocation.after, p.number))).toBe(true);

          // The payoff may exceed the rows' values by the principal's floor (the newest rows'
          // discounts give it back); a payment short of it by that floor leaves it owed.
          const owed = payoffAmount(before, date, loan.terms);
          if (allocation.finished) {
            expect(amount).toBe(owed);
            return;
          }
          const unpaidAfter = allocation.after.rows.filter((r) => !isPaid(r));
          if (unpaidAfter.length === 1 && amount >= owed - 5) {
            const [last] = unpaidAfter;
            if (rowAmountDue(last!, date, loan.terms.lateCharges) === owed - amount) return;
          }
          // A later row at its present value, or a part carried to its due date; a row due at face.
          for (const p of parts) {
            const was = row(before, p.number);
            const days = daysBetween(date, was.due_date);
            const left = new Decimal(was.installment_amount).minus(was.settled);
            if (days <= 0) expect(p.discount).toBe(0);
            else if (isPaid(row(allocation.after, p.number))) {
              expect(p.installment).toBe(presentValue(left, rate, days));
              expect(p.discount).toBe(halfEven(left) - p.installment);
            } else
              expect(p.discount).toBe(
                halfEven(new Decimal(p.installment).times(growth(rate, days))) - p.installment,
              );
          }
        });
        // A loan still owing can always be paid off.
        if (!repayment.rows.every(isPaid))
          expect(payoffAmount(repayment, latest, loan.terms)).toBeGreaterThan(0);
      }),
      { numRuns: 80 },
    );
  });

  it('never pays more principal than was lent, and all of it once the loan is finished', () => {
    fc.assert(
      fc.property(loans, fc.array(steps, { minLength: 1, maxLength: 6 }), (x, plan) => {
        const loan = loanOf(x);
        const lent = loan.figures.principal_amount;
        let principalPaid = 0;
        replay(loan, plan, (_before, { allocation }) => {
          principalPaid += allocation.principal;
          expect(principalPaid).toBeLessThanOrEqual(lent);
          expect(allocation.after.principal_outstanding).toBeGreaterThanOrEqual(0);
          expect(allocation.after.principal_outstanding).toBe(lent - principalPaid);
          expect(allocation.finished).toBe(allocation.after.rows.every(isPaid));
          if (allocation.finished) expect(allocation.after.principal_outstanding).toBe(0);
        });
      }),
      { numRuns: 80 },
    );
  });

  it('paying each row’s amount due, in order, on or after its due date, finishes the loan', () => {
    const early = fc.record({
      at: fc.nat(),
      share: fc.integer({ min: 1, max: 300 }),
      applyTo: fc.constantFrom<ApplyTo>('next', 'last'),
    });
    const lateness = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40 }));
    fc.assert(
      fc.property(
        loans,
        // A few early payments in part first, before the first due date.
        fc.array(early, { maxLength: 3 }),
        fc.array(lateness, { minLength: 36, maxLength: 36 }),
        fc.boolean(),
        (x, payments, lateDays, onTime) => {
          const late = onTime ? lateDays.map(() => 0) : lateDays;
          const loan = loanOf(x);
          let repayment = loan.start;
          let date = loan.release;
          let principalPaid = 0;
          const days = daysBetween(loan.release, loan.figures.first_due_date);
          const offsets = payments
            .map((e) => ({ ...e, offset: e.at % days }))
            .sort((a, b) => a.offset - b.offset);
          for (const { offset, share, applyTo } of offsets) {
            date = addDays(loan.release, offset);
            const payoff = payoffAmount(repayment, date, loan.terms);
            const amount = Math.max(1, Math.floor((payoff * share) / 1000));
            const allocation = pay(repayment, amount, date, loan.terms, applyTo);
            principalPaid += allocation.principal;
            repayment = allocation.after;
          }
          for (const [k, scheduled] of loan.figures.schedule.entries()) {
            if (isPaid(row(repayment, scheduled.number))) continue;
            const on = addDays(scheduled.due_date, late[k]!);
            date = on > date ? on : date;
            const amount = rowAmountDue(row(repayment, scheduled.number), date, rates);
            expect(amount).toBeGreaterThan(0);
            const allocation = pay(repayment, amount, date, loan.terms);
            expect(allocation.rows.map((p) => p.number)).toEqual([scheduled.number]);
            expect(isPaid(row(allocation.after, scheduled.number))).toBe(true);
            principalPaid += allocation.principal;
            repayment = allocation.after;
            // Paid on the due dates, the principal follows the schedule's balance (within the
            // rows' roundings). A row whose interest exceeds its installment (a long first period
            // at a high rate) pays no principal: the loan never owes more principal than it lent.
            if (payments.length === 0 && onTime)
              expect(
                Math.abs(
                  repayment.principal_outstanding -
                    Math.min(loan.figures.principal_amount, scheduled.balance_amount),
                ),
              ).toBeLessThanOrEqual(Math.ceil(loan.figures.schedule.length / 2));
          }
          expect(repayment.rows.every(isPaid)).toBe(true);
          expect(repayment.principal_outstanding).toBe(0);
          expect(principalPaid).toBe(loan.figures.principal_amount);
        },
      ),
      { numRuns: 40 },
    );
  });

  /** A loan some way into its payments, a day on or after the latest one, and a payment then. */
  const midway = fc.record({
    loan: loans,
    plan: fc.array(steps, { maxLength: 4 }),
    gap: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 70 })),
    /** Per mille of the payoff amount. */
    share: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 1000 })),
    split: fc.integer({ min: 0, max: 1000 }),
    applyTo: fc.constantFrom<ApplyTo>('next', 'last'),
  });
  const setUp = (m: typeof midway extends fc.Arbitrary<infer T> ? T : never) => {
    const loan = loanOf(m.loan);
    const { repayment, date: latest } = replay(loan, m.plan);
    const date = addDays(latest, m.gap);
    return { loan, repayment, date, payoff: payoffAmount(repayment, date, loan.terms) };
  };

  it('two payments on one day leave exactly what one payment of their sum would', () => {
    fc.assert(
      fc.property(midway, (m) => {
        const { loan, repayment, date, payoff } = setUp(m);
        fc.pre(payoff >= 2);
        const total = Math.max(2, Math.floor((payoff * m.share) / 1000));
        const a = 1 + Math.floor(((total - 2) * m.split) / 1000);
        const b = total - a;
        const one = pay(repayment, total, date, loan.terms, m.applyTo).after;
        const first = pay(repayment, a, date, loan.terms, m.applyTo).after;
        const two = pay(first, b, date, loan.terms, m.applyTo).after;
        const later = addDays(date, 45);
        for (const on of [date, later])
          expect(two.rows.map((r) => rowAmountDue(r, on, rates))).toEqual(
            one.rows.map((r) => rowAmountDue(r, on, rates)),
          );
        expect(payoffAmount(two, later, loan.terms)).toBe(payoffAmount(one, later, loan.terms));
        for (const [k, r] of two.rows.entries()) {
          const o = one.rows[k]!;
          expect(new Decimal(r.settled).minus(o.settled).abs().lt('1e-20')).toBe(true);
          expect([r.paid_at, r.paid_amount, r.late_fee_due, r.late_interest_due]).toEqual([
            o.paid_at,
            o.paid_amount,
            o.late_fee_due,
            o.late_interest_due,
          ]);
        }
        expect(two.principal_outstanding).toBe(one.principal_outstanding);
      }),
      { numRuns: 70 },
    );
  });

  it('"last" never leaves a longer term than "next", and shortens it once it covers the newest row', () => {
    fc.assert(
      fc.property(midway, (m) => {
        const { loan, repayment, date, payoff } = setUp(m);
        fc.pre(payoff >= 1);
        const amount = Math.max(1, Math.floor((payoff * m.share) / 1000));
        const next = pay(repayment, amount, date, loan.terms, 'next');
        const last = pay(repayment, amount, date, loan.terms, 'last');
        // The term: the newest row still owing.
        expect(lastUnpaid(last.after)).toBeLessThanOrEqual(lastUnpaid(next.after));
        expect(last.finished).toBe(next.finished);

        const unpaid = repayment.rows.filter((r) => !isPaid(r));
        const newest = unpaid.at(-1)!;
        const dueBy = unpaid.filter((r) => r.due_date <= date);
        const toPayNewest =
          sumOf(dueBy, (r) => rowValue(r, date, loan.terms)) + rowValue(newest, date, loan.terms);
        if (newest.due_date > date && amount >= toPayNewest && !next.finished)
          expect(lastUnpaid(last.after)).toBeLessThan(newest.number);
      }),
      { numRuns: 70 },
    );
  });
});
