import { Decimal as DecimalJs } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays, daysBetween } from '../../src/domain/business-date.js';
import { priceSchedule } from '../../src/domain/credit/simulation.js';
import {
  agreementRepayment,
  AgreementRefusal,
  restoreOnBreak,
  simulateAgreement,
  type AgreementScope,
  type LivedPayment,
} from '../../src/domain/loans/agreements.js';
import {
  allocatePayment,
  isPaid,
  payoffAmount,
  rowAmountDue,
  startRepayment,
  type Repayment,
  type RepaymentTerms,
} from '../../src/domain/loans/allocation.js';
import { chargeAmountUnderAgreement } from '../../src/domain/loans/charges.js';
import {
  openBook,
  partsUnderAgreement,
  payoffUnderAgreement,
  payUnderAgreement,
  undoAgreement,
} from '../../src/domain/loans/agreement-book.js';
import {
  agreementEntries,
  paymentEntries,
  trueUpEntries,
  type LedgerAccount,
  type LedgerEntry,
} from '../../src/domain/ledger/postings.js';

/** The test's own decimals: 40 digits, half-even, independent of the module's setup. */
const Decimal = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_EVEN });
type Decimal = InstanceType<typeof Decimal>;
const halfEven = (value: DecimalJs.Value) =>
  new Decimal(value).toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber();
const growth = (rate: string, days: number) =>
  new Decimal(1).plus(rate).pow(new Decimal(days).div(30));

const terms: RepaymentTerms = {
  monthlyRate: '0.02',
  lateCharges: { feeRate: '0.02', monthlyInterestRate: '0.01' },
};
const paidAtOf = (date: string) => `${date}T15:00:00.000Z`;

/**
 * The worked example of docs/agreements.md: R$ 1.000,00 at 2 % a month released 2026-01-05, three
 * rows of R$ 346,75 (the last R$ 346,76) due 2026-02-04, 2026-03-06 and 2026-04-05, nothing paid.
 * On 2026-03-16 the borrower agrees on the overdue rows with 50 % off the interest and late
 * charges, in 4 rows from 2026-03-26.
 */
describe('the worked example of docs/agreements.md', () => {
  const loan = startRepayment(
    [
      { number: 1, due_date: '2026-02-04', installment_amount: 34675 },
      { number: 2, due_date: '2026-03-06', installment_amount: 34675 },
      { number: 3, due_date: '2026-04-05', installment_amount: 34676 },
    ],
    100000,
  );
  const figures = simulateAgreement(
    loan,
    {
      date: '2026-03-16',
      scope: 'overdue',
      discount: { percentage: '50' },
      installments: 4,
      firstDueDate: '2026-03-26',
    },
    terms,
  );

  it('values the debt, the discount and the rows as an independent computation does', () => {
    // Late charges: 2 % of the installment once, 1 % a month pro rata die (40 and 10 days).
    const fee = halfEven(new Decimal(34675).times('0.02'));
    const late1 = halfEven(new Decimal(34675).times('0.01').times(40).div(30));
    const late2 = halfEven(new Decimal(34675).times('0.01').times(10).div(30));
    // Row 3 (20 days ahead) carries the principal its present value is; rows 1–2 the rest.
    const row3 = halfEven(new Decimal(34676).div(growth('0.02', 20)));
    const principal = 100000 - row3;
    const interest = 2 * 34675 - principal;
    const charges = interest + 2 * fee + late1 + late2;
    const discount = halfEven(new Decimal(charges).times('0.5'));
    const agreed = 2 * 34675 + 2 * fee + late1 + late2 - discount;

    expect([fee, late1, late2, row3]).toEqual([694, 462, 116, 34221]);
    expect(figures.rows.map((row) => [row.number, row.value_amount])).toEqual([
      [1, 34675 + fee + late1],
      [2, 34675 + fee + late2],
    ]);
    expect(figures.principal_amount).toBe(principal);
    expect(figures.interest_amount).toBe(interest);
    expect(figures.late_fee_amount + figures.late_interest_amount).toBe(2 * fee + late1 + late2);
    expect(figures.discount_amount).toBe(discount);
    expect(figures.agreed_amount).toBe(agreed);
    // The figures docs/agreements.md prints.
    expect([figures.debt_amount, figures.discount_amount, figures.agreed_amount]).toEqual([
      71316, 2768, 68548,
    ]);

    // Price on calendar days from 2026-03-16: rows on 03-26, 04-26, 05-26, 06-26.
    const days = [10, 41, 71, 102];
    const pv = days.reduce(
      (sum, d) => sum.plus(new Decimal(1).div(growth('0.02', d))),
      new Decimal(0),
    );
    const installment = halfEven(new Decimal(agreed).div(pv));
    expect(figures.schedule.map((row) => row.due_date)).toEqual([
      '2026-03-26',
      '2026-04-26',
      '2026-05-26',
      '2026-06-26',
    ]);
    expect(figures.schedule[0]!.installment_amount).toBe(installment);
    let balance = new Decimal(agreed);
    figures.schedule.forEach((row, j) => {
      const gap = days[j]! - (j === 0 ? 0 : days[j - 1]!);
      const interestPart = halfEven(balance.times(growth('0.02', gap).minus(1)));
      expect(row.interest_amount).toBe(interestPart);
      balance = balance.minus(row.principal_amount);
    });
    expect(figures.schedule.reduce((sum, row) => sum + row.principal_amount, 0)).toBe(agreed);
    expect(figures.schedule.map((row) => row.installment_amount)).toEqual([
      17778, 17778, 17778, 17777,
    ]);
  });

  it('refuses a discount above the interest and late charges, and a loan with nothing late', () => {
    const charges =
      figures.interest_amount + figures.late_fee_amount + figures.late_interest_amount;
    const request = {
      date: '2026-03-16',
      scope: 'overdue' as const,
      installments: 4,
      firstDueDate: '2026-03-26',
    };
    expect(
      simulateAgreement(loan, { ...request, discount: { amount: charges } }, terms).agreed_amount,
    ).toBe(figures.principal_amount);
    expect(() =>
      simulateAgreement(loan, { ...request, discount: { amount: charges + 1 } }, terms),
    ).toThrow(expect.objectContaining({ code: 'agreement_discount_above_charges' }));
    expect(() =>
      simulateAgreement(
        loan,
        { ...request, date: '2026-02-01', firstDueDate: '2026-02-10', discount: null },
        terms,
      ),
    ).toThrow(AgreementRefusal);
  });
});

describe('agreements over random loans (properties)', () => {
  const loans = fc.record({
    principal: fc.integer({ min: 50_000, max: 5_000_000 }),
    count: fc.integer({ min: 2, max: 12 }),
    rateBp: fc.integer({ min: 50, max: 800 }),
    firstDueIn: fc.integer({ min: 7, max: 45 }),
    /** Days after the first due date the agreement is made. */
    lateBy: fc.integer({ min: 6, max: 200 }),
    /** Rows paid (in full, on their due dates) before falling behind. */
    paidBefore: fc.integer({ min: 0, max: 1 }),
    scope: fc.constantFrom<AgreementScope>('overdue', 'all'),
    discountPercent: fc.integer({ min: 0, max: 100 }),
    installments: fc.integer({ min: 1, max: 24 }),
    firstRowIn: fc.integer({ min: 0, max: 30 }),
  });
  type Case = typeof loans extends fc.Arbitrary<infer T> ? T : never;

  const setUp = (x: Case) => {
    const release = '2026-01-05';
    const rate = new Decimal(x.rateBp).div(10_000).toString();
    const caseTerms: RepaymentTerms = { ...terms, monthlyRate: rate };
    const schedule = priceSchedule(
      x.principal,
      rate,
      release,
      addDays(release, x.firstDueIn),
      x.count,
    );
    let loan: Repayment = startRepayment(schedule, x.principal);
    for (const row of schedule.slice(0, Math.min(x.paidBefore, x.count - 1))) {
      loan = allocatePayment(
        loan,
        {
          amount: row.installment_amount,
          date: row.due_date,
          paidAt: paidAtOf(row.due_date),
          applyTo: 'next',
        },
        caseTerms,
      ).after;
    }
    const date = addDays(schedule[Math.min(x.paidBefore, x.count - 1)]!.due_date, x.lateBy);
    return { loan, date, caseTerms };
  };

  it('settles exactly the agreed balance, and an agreement on every row is the payoff', () => {
    fc.assert(
      fc.property(loans, (x) => {
        const { loan, date, caseTerms } = setUp(x);
        const figures = simulateAgreement(
          loan,
          {
            date,
            scope: x.scope,
            discount: x.discountPercent ? { percentage: String(x.discountPercent) } : null,
            installments: x.installments,
            firstDueDate: addDays(date, x.firstRowIn),
          },
          caseTerms,
        );
        const charges =
          figures.interest_amount + figures.late_fee_amount + figures.late_interest_amount;
        expect(figures.discount_amount).toBeLessThanOrEqual(charges);
        expect(figures.agreed_amount).toBeGreaterThanOrEqual(figures.principal_amount);
        expect(figures.principal_amount).toBeLessThanOrEqual(loan.principal_outstanding);
        if (x.scope === 'all') {
          expect(figures.principal_amount).toBe(loan.principal_outstanding);
          expect(figures.debt_amount).toBe(payoffAmount(loan, date, caseTerms));
        } else {
          // The overdue rows at what they owe today, late charges included.
          const owed = loan.rows
            .filter((row) => figures.rows.some((r) => r.number === row.number))
            .reduce((sum, row) => sum + rowAmountDue(row, date, caseTerms.lateCharges), 0);
          expect(figures.debt_amount).toBe(owed);
        }
        // The rows' principal parts are the agreed balance; paid on their due dates, they settle it.
        expect(figures.schedule.reduce((sum, row) => sum + row.principal_amount, 0)).toBe(
          figures.agreed_amount,
        );
        let agreement = agreementRepayment(figures);
        let principal = 0;
        let cash = 0;
        for (const row of figures.schedule) {
          const paid = allocatePayment(
            agreement,
            {
              amount: row.installment_amount,
              date: row.due_date,
              paidAt: paidAtOf(row.due_date),
              applyTo: 'next',
            },
            caseTerms,
          );
          agreement = paid.after;
          principal += paid.principal;
          cash += row.installment_amount;
          expect(paid.lateFee + paid.lateInterest).toBe(0);
        }
        expect(agreement.rows.every(isPaid)).toBe(true);
        expect(principal).toBe(figures.agreed_amount);
        expect(cash).toBe(figures.total_amount);
      }),
      { numRuns: 60 },
    );
  });

  it('a break leaves the borrower owing what they would have without it, less what they paid', () => {
    const plans = fc.array(
      fc.record({ gap: fc.integer({ min: 0, max: 40 }), share: fc.integer({ min: 1, max: 400 }) }),
      { minLength: 0, maxLength: 4 },
    );
    fc.assert(
      fc.property(loans, plans, (x, plan) => {
        const { loan, date, caseTerms } = setUp(x);
        let day = date;
        const payments: LivedPayment[] = [];
        for (const step of plan) {
          day = addDays(day, step.gap);
          const amount = Math.max(
            1,
            Math.floor((loan.principal_outstanding * step.share) / 10_000),
          );
          payments.push({ amount, date: day, paidAt: paidAtOf(day), applyTo: 'next' });
        }
        const restored = restoreOnBreak(loan, payments, caseTerms);
        // Without the agreement: the same payments, each allocated on its day (§13), by hand.
        let without = loan;
        let paidIn = 0;
        for (const payment of payments) {
          if (without.rows.every(isPaid)) continue;
          without = allocatePayment(without, payment, caseTerms).after;
          paidIn += payment.amount;
        }
        expect(restored.repayment).toEqual(without);
        const received = (r: Repayment) => r.rows.reduce((sum, row) => sum + row.paid_amount, 0);
        expect(received(restored.repayment) - received(loan)).toBe(paidIn);
        expect(paidIn + restored.excess).toBe(payments.reduce((sum, p) => sum + p.amount, 0));
        expect(loan.principal_outstanding - restored.repayment.principal_outstanding).toBe(
          restored.principalPaid,
        );
        // And what is owed at the break is the loan's payoff less what the payments were worth.
        const breakDay = addDays(day, 31);
        if (payments.length === 0)
          expect(payoffAmount(restored.repayment, breakDay, caseTerms)).toBe(
            payoffAmount(loan, breakDay, caseTerms),
          );
        expect(daysBetween(date, breakDay)).toBeGreaterThan(0);
      }),
      { numRuns: 40 },
    );
  });

  it('paid under an agreement, the books follow the rows; kept it pays the loan, broken it gives back what §13 would', () => {
    const plans = fc.array(
      fc.record({ gap: fc.integer({ min: 0, max: 45 }), share: fc.integer({ min: 1, max: 6000 }) }),
      { minLength: 1, maxLength: 5 },
    );
    fc.assert(
      fc.property(loans, plans, fc.boolean(), (x, plan, keep) => {
        const { loan, date, caseTerms } = setUp(x);
        const figures = simulateAgreement(
          loan,
          {
            date,
            scope: x.scope,
            discount: x.discountPercent ? { percentage: String(x.discountPercent) } : null,
            installments: x.installments,
            firstDueDate: addDays(date, x.firstRowIn),
          },
          caseTerms,
        );
        // The loan's books: its principal owed, the incomes and the discount at nothing yet.
        const books: Partial<Record<LedgerAccount, number>> = {
          loan_principal: loan.principal_outstanding,
        };
        const post = (entries: readonly LedgerEntry[]) => {
          for (const entry of entries)
            books[entry.account] =
              (books[entry.account] ?? 0) +
              (entry.direction === 'debit' ? entry.amount : -entry.amount);
        };
        const before = { ...books };
        const opened = openBook(figures, loan, before);
        post(agreementEntries(figures));
        expect(books.loan_principal).toBe(opened.loan.principal_outstanding);
        expect(books.agreement_discounts ?? 0).toBe(figures.discount_amount);

        let book = opened.book;
        let repayment = opened.loan;
        let day = date;
        const steps = keep
          ? figures.schedule.map((row) => ({ date: row.due_date, amount: row.installment_amount }))
          : plan.map((step) => {
              day = addDays(day, step.gap);
              return {
                date: day,
                amount: Math.max(1, Math.floor((figures.agreed_amount * step.share) / 10_000)),
              };
            });
        for (const step of steps) {
          if (repayment.rows.every(isPaid)) break;
          const owed = payoffUnderAgreement(repayment, figures, book, step.date, caseTerms);
          // A charge asks for what the book takes: `payoff` settles both parts, no `amount`
          // above it, and `next` pays the agreement's oldest unpaid row in full.
          const parts = partsUnderAgreement(repayment, figures, book);
          const charge = (scope: 'next' | 'payoff' | 'amount', stated?: number) =>
            chargeAmountUnderAgreement(scope, parts, step.date, caseTerms, stated);
          expect(charge('payoff')).toEqual({ ok: true, amount: owed });
          expect(charge('amount', owed)).toEqual({ ok: true, amount: owed });
          expect(charge('amount', owed + 1)).toMatchObject({
            ok: false,
            code: 'above_payoff_amount',
          });
          const next = charge('next');
          const oldest = book.repayment.rows.find((row) => !isPaid(row));
          if (next.ok && oldest) {
            const byNext = payUnderAgreement(
              repayment,
              figures,
              book,
              {
                amount: next.amount,
                date: step.date,
                paidAt: paidAtOf(step.date),
                applyTo: 'next',
              },
              caseTerms,
            );
            const row = byNext.book.repayment.rows.find((r) => r.number === oldest.number)!;
            expect(isPaid(row)).toBe(true);
          }
          const amount = Math.min(step.amount, owed);
          const paid = payUnderAgreement(
            repayment,
            figures,
            book,
            { amount, date: step.date, paidAt: paidAtOf(step.date), applyTo: 'next' },
            caseTerms,
          );
          post(paymentEntries({ amount, ...paid }));
          book = paid.book;
          repayment = paid.after;
          // `loan_principal` is what the rows still owe, after every payment (contract §13).
          expect(books.loan_principal).toBe(repayment.principal_outstanding);
          expect(paid.principal + paid.interest + paid.lateFee + paid.lateInterest).toBe(amount);
        }
        if (keep) {
          // Every agreement row paid on its due date: fulfilled, the covered rows paid by it.
          expect(book.repayment.rows.every(isPaid)).toBe(true);
          const covered = new Set(figures.rows.map((row) => row.number));
          expect(repayment.rows.filter((row) => covered.has(row.number)).every(isPaid)).toBe(true);
          if (repayment.rows.every(isPaid)) expect(books.loan_principal).toBe(0);
          return;
        }
        // Broken: the rows as §13 would have left them, paid with the same money, each payment
        // on its own day (allocated here without the agreement's code), and the books trued up to
        // exactly what those payments would have booked.
        const undone = undoAgreement(book, caseTerms);
        let without = loan;
        const earned = { principal: 0, interest: 0, lateFee: 0, lateInterest: 0, excess: 0 };
        for (const payment of book.payments) {
          const owed = without.rows.every(isPaid)
            ? 0
            : payoffAmount(without, payment.date, caseTerms);
          const applied = Math.min(owed, payment.amount);
          earned.excess += payment.amount - applied;
          if (applied === 0) continue;
          const paid = allocatePayment(without, { ...payment, amount: applied }, caseTerms);
          without = paid.after;
          earned.principal += paid.principal;
          earned.interest += paid.interest;
          earned.lateFee += paid.lateFee;
          earned.lateInterest += paid.lateInterest;
        }
        expect(undone.repayment.rows).toEqual(without.rows);
        expect(undone.repayment.principal_outstanding).toBe(without.principal_outstanding);
        expect(undone.excess).toBe(earned.excess);
        post(
          trueUpEntries(
            { ...books, collections_clearing: 0 },
            { ...undone.targetBalances, collections_clearing: 0 },
            undone.excess,
          ),
        );
        expect(books.loan_principal).toBe(without.principal_outstanding);
        expect(0 - (books.interest_income ?? 0)).toBe(earned.interest);
        expect(0 - (books.late_fee_income ?? 0)).toBe(earned.lateFee);
        expect(0 - (books.late_interest_income ?? 0)).toBe(earned.lateInterest);
        expect(books.agreement_discounts ?? 0).toBe(0);
      }),
      { numRuns: 60 },
    );
  });
});
