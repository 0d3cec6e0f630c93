import { Decimal as DecimalJs } from 'decimal.js';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { carriedOn } from '../../src/domain/assignments/carrying.js';
import { whyNotAssignable } from '../../src/domain/assignments/assignments.js';
import {
  isDiscountRate,
  presentValue,
  priceOf,
  soldRows,
} from '../../src/domain/assignments/pricing.js';
import { addDays, daysBetween } from '../../src/domain/business-date.js';
import { simulateLoan } from '../../src/domain/credit/simulation.js';
import {
  assignedWithdrawalEntries,
  assignmentEntries,
  bookedFor,
  disbursementEntries,
  paymentEntries,
  priceReceivedEntries,
  remittanceEntries,
  signedSum,
  type LedgerEntry,
} from '../../src/domain/ledger/postings.js';
import {
  allocatePayment,
  isPaid,
  payoffAmount,
  quotePayoff,
  startRepayment,
  type Repayment,
  type RepaymentTerms,
} from '../../src/domain/loans/allocation.js';
import { decreeIof as iof } from '../helpers/iof.js';

/** The test's own decimals, apart from the service's: 50 digits, half-even. */
const Decimal = DecimalJs.clone({ precision: 50, rounding: DecimalJs.ROUND_HALF_EVEN });

/** amount / (1 + r)^(d/30) by a fractional power, half-even: an independent computation. */
const independentPv = (amount: number, rate: string, days: number) =>
  new Decimal(amount)
    .div(new Decimal(1).plus(rate).pow(new Decimal(Math.max(0, days)).div(30)))
    .toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN)
    .toNumber();

const balances = (entries: readonly LedgerEntry[]) => {
  const out = new Map<string, number>();
  for (const e of entries)
    out.set(
      e.account,
      (out.get(e.account) ?? 0) + (e.direction === 'debit' ? e.amount : -e.amount),
    );
  return out;
};

const row = (number: number, due_date: string, installment_amount: number, settled = '0') => ({
  number,
  due_date,
  installment_amount,
  settled,
  paid_amount: 0,
  late_fee_due: null,
  late_interest_due: 0,
  late_interest_from: due_date,
  paid_at: null,
});

describe('pricing (contract §19)', () => {
  it('matches the hand-worked example of docs/assignments.md, figure by figure', () => {
    const doc = readFileSync(new URL('../../docs/assignments.md', import.meta.url), 'utf8');
    const section = doc.slice(
      doc.indexOf('### A hand-worked example'),
      doc.indexOf('## The ledger'),
    );
    const table = [
      ...section.matchAll(
        /^\| (\d) \| (\d{4}-\d\d-\d\d) \| (\d+) \| (\d+) \| [^|]+ \| (\d+) \|$/gm,
      ),
    ];
    expect(table).toHaveLength(4);
    const repayment: Repayment = {
      rows: [
        row(1, '2026-01-10', 35_000),
        row(2, '2026-02-10', 35_000, '15000'),
        row(3, '2026-03-10', 35_000),
        row(4, '2026-04-10', 35_000),
      ],
      principal_outstanding: 120_000,
      last_paid_at: null,
    };
    const sold = soldRows(repayment, '0.02', '2026-01-15');
    expect(
      sold.map((r) => [
        r.number,
        r.due_date,
        r.amount,
        Math.max(0, daysBetween('2026-01-15', r.due_date)),
        r.present_value,
      ]),
    ).toEqual(table.map((m) => [Number(m[1]), m[2], Number(m[3]), Number(m[4]), Number(m[5])]));
    const total = /\*\*(\d+)\*\* centavos/.exec(section)![1]!;
    expect(priceOf(sold)).toBe(Number(total));
    expect(priceOf(sold)).toBe(121_524);
  });

  it('the batch price is the sum of its rows’ present values, each the independent (1 + r)^(d/30)', () => {
    const loans = fc.array(
      fc.array(
        fc.record({
          amount: fc.integer({ min: 1, max: 5_000_000 }),
          gap: fc.integer({ min: 1, max: 62 }),
          paidShare: fc.constantFrom(0, 0, 0.3, 1),
        }),
        { minLength: 1, maxLength: 12 },
      ),
      { minLength: 1, maxLength: 4 },
    );
    const rates = fc
      .integer({ min: 0, max: 200_000 })
      .map((n) => new Decimal(n).div(1_000_000).toFixed());
    fc.assert(
      fc.property(loans, rates, fc.integer({ min: -90, max: 200 }), (batch, rate, offset) => {
        expect(isDiscountRate(rate)).toBe(true);
        const settlement = addDays('2026-03-01', offset);
        let price = 0;
        let sum = 0;
        for (const rows of batch) {
          let due = '2026-01-01';
          const repayment: Repayment = {
            rows: rows.map((r, k) => {
              due = addDays(due, r.gap);
              const settled = Math.floor(r.amount * r.paidShare);
              const state = row(k + 1, due, r.amount, String(settled));
              return r.paidShare === 1 ? { ...state, paid_at: `${due}T15:00:00.000Z` } : state;
            }),
            principal_outstanding: 0,
            last_paid_at: null,
          };
          const sold = soldRows(repayment, rate, settlement);
          expect(sold.map((r) => r.number)).toEqual(
            repayment.rows
              .filter((r) => !isPaid(r) && r.installment_amount > Number(r.settled))
              .map((r) => r.number),
          );
          for (const r of sold) {
            const days = daysBetween(settlement, r.due_date);
            expect(r.present_value).toBe(independentPv(r.amount, rate, days));
            expect(r.present_value).toBeLessThanOrEqual(r.amount);
            if (days <= 0) expect(r.present_value).toBe(r.amount);
            sum += r.present_value;
          }
          price += priceOf(sold);
        }
        expect(price).toBe(sum);
      }),
      { numRuns: 80 },
    );
  });

  it('refuses rates outside 0–20 % a month, and loans that cannot be sold', () => {
    for (const rate of ['0.2000001', '0.21', '1', '-0.01', '0.1234567', '.01', '0,01'])
      expect(isDiscountRate(rate)).toBe(false);
    for (const rate of ['0', '0.2', '0.015', '0.123456']) expect(isDiscountRate(rate)).toBe(true);
    expect(presentValue(10_000, '0', '2026-01-01', '2027-01-01')).toBe(10_000);
    const sellable = {
      environment: 'production' as const,
      status: 'active',
      disbursementStatus: 'confirmed',
      writtenOffAt: null,
      assignmentId: null,
      liveAgreement: false,
      beingRefinanced: false,
    };
    expect(whyNotAssignable(sellable)).toBeNull();
    expect(whyNotAssignable({ ...sellable, environment: 'sandbox' })).toMatch(/sandbox/);
    expect(whyNotAssignable({ ...sellable, status: 'finished' })).toMatch(/finished/);
    expect(whyNotAssignable({ ...sellable, writtenOffAt: new Date() })).toMatch(/written off/);
    expect(whyNotAssignable({ ...sellable, assignmentId: 'asg_x' })).toMatch(/sold already/);
    expect(whyNotAssignable({ ...sellable, liveAgreement: true })).toMatch(/agreement/);
    expect(whyNotAssignable({ ...sellable, beingRefinanced: true })).toMatch(/refinances/);
    expect(whyNotAssignable({ ...sellable, disbursementStatus: 'claimed' })).toMatch(
      /disbursement/,
    );
  });
});

/**
 * A random loan, paid in part, sold on a random day, then paid on: the sale balances, takes the
 * lender's `loan_principal` to zero and leaves the borrower's rows as they were (the payoff quote
 * of any later day the same as without the sale); every payment after it keeps the principal at
 * zero and owes the buyer exactly what the allocation would have earned the lender.
 */
describe('the ledger of a sale over random loans', () => {
  const loans = fc.record({
    requestedAmount: fc.integer({ min: 50_000, max: 5_000_000 }),
    installments: fc.integer({ min: 2, max: 18 }),
    monthlyRate: fc.constantFrom('0.0099', '0.0199', '0.0499'),
    firstDueOffset: fc.integer({ min: 7, max: 45 }),
    paidBefore: fc.array(fc.double({ min: 0.05, max: 0.6, noNaN: true }), { maxLength: 3 }),
    saleAfter: fc.integer({ min: 0, max: 120 }),
    rate: fc.constantFrom('0', '0.01', '0.025', '0.08'),
    paidAfter: fc.array(fc.double({ min: 0.05, max: 1, noNaN: true }), { maxLength: 3 }),
  });

  it('derecognizes the loan and leaves the borrower’s debt untouched', () => {
    fc.assert(
      fc.property(loans, (loan) => {
        const release = '2026-02-02';
        const figures = simulateLoan({
          requestedAmount: loan.requestedAmount,
          installments: loan.installments,
          monthlyInterestRate: loan.monthlyRate,
          releaseDate: release,
          firstDueDate: addDays(release, loan.firstDueOffset),
          borrower: 'individual',
          iof,
        });
        const terms: RepaymentTerms = {
          monthlyRate: loan.monthlyRate,
          lateCharges: { feeRate: '0.02', monthlyInterestRate: '0.01' },
        };
        const ledger: LedgerEntry[] = [...disbursementEntries(figures)];
        let repayment = startRepayment(figures.schedule, figures.principal_amount);
        let date = release;
        const pay = (share: number, sold: string | null) => {
          if (repayment.rows.every(isPaid)) return;
          date = addDays(date, 20);
          const amount = Math.max(1, Math.floor(payoffAmount(repayment, date, terms) * share));
          const paid = allocatePayment(
            repayment,
            { amount, date, paidAt: `${date}T15:00:00.000Z`, applyTo: 'next' },
            terms,
          );
          const plain = paymentEntries({ amount, ...paid });
          const entries = bookedFor({ writtenOffAt: null, assignmentId: sold }, plain);
          expect(signedSum(entries)).toBe(0);
          if (sold) {
            const earned = plain
              .filter((e) => e.direction === 'credit' && e.account !== 'refunds_payable')
              .reduce((s, e) => s + e.amount, 0);
            expect(balances(entries).get('payable_to_assignee')).toBe(-earned);
          }
          ledger.push(...entries);
          repayment = paid.after;
        };
        for (const share of loan.paidBefore) pay(share, null);
        if (repayment.rows.every(isPaid)) return;
        const saleDate = addDays(date, loan.saleAfter);
        const before = JSON.stringify(repayment);
        const later = addDays(saleDate, 15);
        const quoteBefore = quotePayoff(repayment, later, terms);
        const principal = balances(ledger).get('loan_principal') ?? 0;
        expect(principal).toBe(repayment.principal_outstanding);
        const sold = soldRows(repayment, loan.rate, saleDate);
        const carrying = carriedOn(repayment, terms, principal, saleDate);
        const sale = assignmentEntries({
          price: priceOf(sold),
          principal: carrying.principal,
          interest: carrying.interest,
          lateFee: carrying.late_fee,
          lateInterest: carrying.late_interest,
        });
        expect(signedSum(sale)).toBe(0);
        ledger.push(...sale);
        const after = balances(ledger);
        expect(after.get('loan_principal') ?? 0).toBe(0);
        expect(after.get('assignment_receivable')).toBe(priceOf(sold));
        // What the book carried is the payoff of the day: principal + interest + charges.
        expect(
          carrying.principal + carrying.interest + carrying.late_fee + carrying.late_interest,
        ).toBe(payoffAmount(repayment, saleDate, terms));
        expect(-(after.get('assignment_result') ?? 0)).toBe(
          priceOf(sold) - payoffAmount(repayment, saleDate, terms),
        );
        // The borrower owes exactly what it owed.
        expect(JSON.stringify(repayment)).toBe(before);
        expect(quotePayoff(repayment, later, terms)).toEqual(quoteBefore);
        date = saleDate;
        for (const share of loan.paidAfter) pay(share, 'asg_sold');
        expect(balances(ledger).get('loan_principal') ?? 0).toBe(0);
        // The buyer pays the price, and what the loan collected for it is remitted: both close.
        if (priceOf(sold) > 0) ledger.push(...priceReceivedEntries(priceOf(sold)));
        const owed = -(balances(ledger).get('payable_to_assignee') ?? 0);
        if (owed > 0) ledger.push(...remittanceEntries(owed));
        expect(balances(ledger).get('assignment_receivable') ?? 0).toBe(0);
        expect(balances(ledger).get('payable_to_assignee') ?? 0).toBe(0);
        expect(signedSum(ledger)).toBe(0);
      }),
      { numRuns: 40 },
    );
  });

  it('the price received clears the receivable into cash; a remittance pays the buyer out of cash', () => {
    expect(balances(priceReceivedEntries(121_524))).toEqual(
      new Map([
        ['collections_clearing', 121_524],
        ['assignment_receivable', -121_524],
      ]),
    );
    expect(balances(remittanceEntries(5_000))).toEqual(
      new Map([
        ['payable_to_assignee', 5_000],
        ['disbursement_clearing', -5_000],
      ]),
    );
    expect(() => remittanceEntries(0)).toThrow();
    expect(() => priceReceivedEntries(-1)).toThrow(RangeError);
  });

  it('a withdrawal after the sale gives the money returned to the buyer, less what is due back', () => {
    expect(balances(assignedWithdrawalEntries(965_000, 5_000))).toEqual(
      new Map([
        ['collections_clearing', 965_000],
        ['refunds_payable', -5_000],
        ['payable_to_assignee', -960_000],
      ]),
    );
    // Paid above what was released: the buyer owes the borrower's money back.
    expect(balances(assignedWithdrawalEntries(0, 3_000))).toEqual(
      new Map([
        ['refunds_payable', -3_000],
        ['payable_to_assignee', 3_000],
      ]),
    );
  });
});
