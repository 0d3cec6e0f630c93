import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays } from '../../src/domain/business-date.js';
import { simulateLoan } from '../../src/domain/credit/simulation.js';
import {
  disbursementEntries,
  overpaymentEntries,
  paymentEntries,
  payoutReturnedEntries,
  refundEntries,
  withdrawalEntries,
  signedSum,
  UnbalancedTransactionError,
  type LedgerEntry,
} from '../../src/domain/ledger/postings.js';
import {
  allocatePayment,
  isPaid,
  payoffAmount,
  startRepayment,
  type RepaymentTerms,
} from '../../src/domain/loans/allocation.js';
import { withdrawalDue, withdrawalWindowEnds } from '../../src/domain/loans/charges.js';
import { planPixBooking, type NamedCharge } from '../../src/domain/loans/pix-booking.js';
import { decreeIof as iof } from '../helpers/iof.js';

/** Each account's balance (debits − credits) over the entries. */
function balances(entries: readonly LedgerEntry[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of entries)
    out.set(
      e.account,
      (out.get(e.account) ?? 0) + (e.direction === 'debit' ? e.amount : -e.amount),
    );
  return out;
}

describe('postings', () => {
  it('a withdrawal undoes the loan: principal closed, IOF reversed, income paid taken back, the rest due back', () => {
    // R$ 10,000.00 released with R$ 211.04 of IOF; one payment of R$ 400.00 paid 300.00 of
    // principal, 90.00 of interest and 10.00 of late charges. The borrower returns the released
    // amount less what it paid (9,600.00), and sends 50.00 too many.
    const before = [
      ...disbursementEntries({
        principal_amount: 1_021_104,
        requested_amount: 1_000_000,
        iof_amount: 21_104,
      }),
      ...paymentEntries({
        amount: 40_000,
        principal: 30_000,
        interest: 9_000,
        lateFee: 600,
        lateInterest: 400,
      }),
    ];
    const withdrawal = withdrawalEntries(965_000, 5_000, Object.fromEntries(balances(before)));
    expect(signedSum(withdrawal)).toBe(0);
    const after = balances([...before, ...withdrawal]);
    for (const account of [
      'loan_principal',
      'iof_payable',
      'interest_income',
      'late_fee_income',
      'late_interest_income',
    ])
      expect(after.get(account)).toBe(0);
    // The money in equals the money out; what is left is the refund owed.
    expect(after.get('collections_clearing')).toBe(40_000 + 965_000);
    expect(after.get('disbursement_clearing')).toBe(-1_000_000);
    expect(after.get('refunds_payable')).toBe(-5_000);
    // Paying the refund closes it.
    const closed = balances([...before, ...withdrawal, ...refundEntries(5_000)]);
    expect(closed.get('refunds_payable')).toBe(0);
    expect([...closed.values()].reduce((a, b) => a + b, 0)).toBe(0);
  });

  it('a payout that came back undoes the loan: the money returned clears the payout, what was paid is due back', () => {
    // The same loan, paid out by the PSP; one payment of R$ 400.00; then the receiving bank gives
    // the R$ 10,000.00 back.
    const before = [
      ...disbursementEntries({
        principal_amount: 1_021_104,
        requested_amount: 1_000_000,
        iof_amount: 21_104,
      }),
      ...paymentEntries({
        amount: 40_000,
        principal: 30_000,
        interest: 9_000,
        lateFee: 600,
        lateInterest: 400,
      }),
    ];
    const returned = payoutReturnedEntries(1_000_000, Object.fromEntries(balances(before)));
    expect(signedSum(returned)).toBe(0);
    const after = balances([...before, ...returned]);
    for (const account of [
      'loan_principal',
      'iof_payable',
      'interest_income',
      'late_fee_income',
      'late_interest_income',
      'disbursement_clearing',
    ])
      expect(after.get(account) ?? 0).toBe(0);
    // Everything the borrower paid is owed back to them; the cash in is what they paid.
    expect(after.get('refunds_payable')).toBe(-40_000);
    expect(after.get('collections_clearing')).toBe(40_000);
    // Returned before any payment: nothing is due back, and no refunds entry is posted.
    const unpaid = disbursementEntries({
      principal_amount: 1_021_104,
      requested_amount: 1_000_000,
      iof_amount: 21_104,
    });
    const undone = payoutReturnedEntries(1_000_000, Object.fromEntries(balances(unpaid)));
    expect(undone.map((entry) => entry.account).sort()).toEqual(
      ['disbursement_clearing', 'iof_payable', 'loan_principal'].sort(),
    );
    expect([...balances([...unpaid, ...undone]).values()].every((balance) => balance === 0)).toBe(
      true,
    );
  });

  it('money a loan did not owe is due back, whole or in part', () => {
    expect(overpaymentEntries(12_345)).toEqual([
      { account: 'collections_clearing', direction: 'debit', amount: 12_345 },
      { account: 'refunds_payable', direction: 'credit', amount: 12_345 },
    ]);
    expect(
      paymentEntries({
        amount: 10_100,
        principal: 9_000,
        interest: 1_000,
        lateFee: 0,
        lateInterest: 0,
        refund: 100,
      }).at(-1),
    ).toEqual({ account: 'refunds_payable', direction: 'credit', amount: 100 });
  });

  it('a disbursement owes the principal, pays out the requested amount and owes the IOF', () => {
    expect(
      disbursementEntries({
        principal_amount: 1_021_104,
        requested_amount: 1_000_000,
        iof_amount: 21_104,
      }),
    ).toEqual([
      { account: 'loan_principal', direction: 'debit', amount: 1_021_104 },
      { account: 'disbursement_clearing', direction: 'credit', amount: 1_000_000 },
      { account: 'iof_payable', direction: 'credit', amount: 21_104 },
    ]);
  });

  it('a payment posts the cash against its parts, leaves out zero parts, and never a discount', () => {
    expect(
      paymentEntries({
        amount: 36_875,
        principal: 30_000,
        interest: 5_000,
        lateFee: 700,
        lateInterest: 1_175,
      }),
    ).toEqual([
      { account: 'collections_clearing', direction: 'debit', amount: 36_875 },
      { account: 'loan_principal', direction: 'credit', amount: 30_000 },
      { account: 'interest_income', direction: 'credit', amount: 5_000 },
      { account: 'late_fee_income', direction: 'credit', amount: 700 },
      { account: 'late_interest_income', direction: 'credit', amount: 1_175 },
    ]);
    expect(
      paymentEntries({
        amount: 20_000,
        principal: 20_000,
        interest: 0,
        lateFee: 0,
        lateInterest: 0,
      }),
    ).toHaveLength(2);
  });

  it('refuses parts that do not add up to the cash, and negative parts', () => {
    expect(() =>
      paymentEntries({ amount: 100, principal: 60, interest: 39, lateFee: 0, lateInterest: 0 }),
    ).toThrow(UnbalancedTransactionError);
    expect(() =>
      paymentEntries({ amount: 100, principal: 101, interest: -1, lateFee: 0, lateInterest: 0 }),
    ).toThrow(RangeError);
  });
});

/**
 * Random loans through random sequences of payments (any amount, `apply_to` both ways, late ones
 * with their charges, and a payoff at the end), posting each as the activities do: after every
 * step each transaction balances, the ledger sums to zero, and `loan_principal` is the principal
 * the rows still owe; once paid off, it is zero and the income accounts hold what was paid.
 */
describe('the ledger over random loans', () => {
  const loans = fc.record({
    requestedAmount: fc.integer({ min: 50_000, max: 5_000_000 }),
    installments: fc.integer({ min: 2, max: 24 }),
    monthlyRate: fc.constantFrom('0.0099', '0.0199', '0.0249', '0.0499'),
    releaseDay: fc.integer({ min: 0, max: 1_500 }),
    firstDueOffset: fc.integer({ min: 7, max: 45 }),
  });
  const steps = fc.array(
    fc.record({
      days: fc.integer({ min: 0, max: 70 }),
      share: fc.double({ min: 0.01, max: 1, noNaN: true }),
      applyTo: fc.constantFrom('next' as const, 'last' as const),
    }),
    { maxLength: 8 },
  );

  it('keeps every invariant after every step, and closes at zero', () => {
    fc.assert(
      fc.property(loans, steps, (loan, plan) => {
        const release = addDays('2026-01-01', loan.releaseDay);
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
        const check = () => {
          expect(signedSum(ledger)).toBe(0);
          expect(balances(ledger).get('loan_principal') ?? 0).toBe(repayment.principal_outstanding);
        };
        check();
        const post = (amount: number, applyTo: 'next' | 'last') => {
          const paid = allocatePayment(
            repayment,
            { amount, date, paidAt: `${date}T15:00:00.000Z`, applyTo },
            terms,
          );
          const entries = paymentEntries({ amount, ...paid });
          expect(signedSum(entries)).toBe(0);
          ledger.push(...entries);
          repayment = paid.after;
          check();
        };
        for (const step of plan) {
          if (repayment.rows.every(isPaid)) break;
          date = addDays(date, step.days);
          const owed = payoffAmount(repayment, date, terms);
          post(Math.max(1, Math.floor(owed * step.share)), step.applyTo);
        }
        if (!repayment.rows.every(isPaid)) post(payoffAmount(repayment, date, terms), 'next');
        const final = balances(ledger);
        expect(final.get('loan_principal')).toBe(0);
        expect(repayment.principal_outstanding).toBe(0);
        // The cash collected is the principal lent back, plus what the lender earned.
        const earned =
          -(final.get('interest_income') ?? 0) -
          (final.get('late_fee_income') ?? 0) -
          (final.get('late_interest_income') ?? 0);
        expect(final.get('collections_clearing')).toBe(figures.principal_amount + earned);
        expect(earned).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 60 },
    );
  });
});

describe('the ledger over random Pix (contract §14)', () => {
  const loans = fc.record({
    requestedAmount: fc.integer({ min: 50_000, max: 5_000_000 }),
    installments: fc.integer({ min: 2, max: 24 }),
    monthlyRate: fc.constantFrom('0.0099', '0.0199', '0.0249', '0.0499'),
    releaseDay: fc.integer({ min: 0, max: 1_500 }),
    firstDueOffset: fc.integer({ min: 7, max: 45 }),
  });
  // Each step: days on (often past the 7-day withdrawal window), then a Pix (a share of what the
  // loan owes, above it past 1), a withdrawal asked for (its charge made, or the loan withdrawn at
  // once when payments already cover what was released), a Pix on the withdrawal charge (a share
  // of its amount: less, or more), or part of what is due back sent to the borrower.
  const steps = fc.array(
    fc.record({
      days: fc.integer({ min: 0, max: 12 }),
      kind: fc.constantFrom(
        'pix' as const,
        'withdrawal' as const,
        'withdrawal-pix' as const,
        'refund' as const,
      ),
      share: fc.double({ min: 0.01, max: 1.3, noNaN: true }),
    }),
    { maxLength: 12 },
  );

  it('keeps every invariant after every Pix, and withdraws only by a charge paid in full within the window', () => {
    fc.assert(
      fc.property(loans, steps, (loan, plan) => {
        const release = addDays('2026-01-01', loan.releaseDay);
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
        const noon = (date: string) => `${date}T15:00:00.000Z`; // 12:00 in São Paulo
        const windowEnds = withdrawalWindowEnds(new Date(noon(release)));
        const ledger: LedgerEntry[] = [...disbursementEntries(figures)];
        let repayment = startRepayment(figures.schedule, figures.principal_amount);
        const state: { status: 'active' | 'finished' | 'cancelled' } = { status: 'active' };
        let withdrawalCharge: NamedCharge | undefined;
        let date = release;
        let received = 0;
        let dueBack = 0;
        let sentBack = 0;
        const check = () => {
          const now = balances(ledger);
          expect(signedSum(ledger)).toBe(0);
          expect(now.get('collections_clearing') ?? 0).toBe(received);
          expect(now.get('refunds_payable') ?? 0).toBe(sentBack - dueBack);
          if (state.status === 'cancelled') {
            for (const account of ['loan_principal', 'iof_payable', 'interest_income'] as const)
              expect(now.get(account) ?? 0).toBe(0);
          } else {
            expect(now.get('loan_principal') ?? 0).toBe(repayment.principal_outstanding);
            expect(now.get('iof_payable')).toBe(-figures.iof_amount);
          }
        };
        const withdraw = (entries: LedgerEntry[], refund: number) => {
          expect(signedSum(entries)).toBe(0);
          expect(refund).toBeGreaterThanOrEqual(0);
          ledger.push(...entries);
          dueBack += refund;
          state.status = 'cancelled';
        };
        const pix = (amount: number, charge: NamedCharge | undefined) => {
          const booking = planPixBooking({
            amount,
            date,
            paidAt: noon(date),
            paidAtByBank: noon(date),
            charge,
            loan: { status: state.status, figures, repayment, terms },
            balances: Object.fromEntries(balances(ledger)),
          });
          expect(signedSum(booking.entries)).toBe(0);
          expect(booking.refund).toBeGreaterThanOrEqual(0);
          received += amount;
          if (booking.type === 'withdrawal') {
            // Only a withdrawal charge active when paid, within the window, paid in full.
            expect(charge?.scope).toBe('withdrawal');
            expect(Date.parse(noon(date))).toBeLessThan(windowEnds.getTime());
            expect(charge!.status).not.toBe('cancelled');
            expect(amount).toBeGreaterThanOrEqual(charge!.amount);
            withdraw(booking.entries, booking.refund);
          } else {
            ledger.push(...booking.entries);
            dueBack += booking.refund;
          }
          if (booking.type === 'payment' || booking.type === 'payoff') {
            repayment = booking.allocation.after;
            if (booking.allocation.finished) state.status = 'finished';
          }
          check();
        };
        check();
        for (const step of plan) {
          date = addDays(date, step.days);
          // The charge's timer: past the window it is expired.
          if (
            withdrawalCharge?.status === 'active' &&
            Date.parse(noon(date)) >= windowEnds.getTime()
          )
            withdrawalCharge = { ...withdrawalCharge, status: 'expired' };
          if (step.kind === 'refund') {
            const amount = Math.floor((dueBack - sentBack) * Math.min(step.share, 1));
            if (amount > 0) {
              ledger.push(...refundEntries(amount));
              sentBack += amount;
              check();
            }
            continue;
          }
          if (step.kind === 'withdrawal') {
            // Asked within the window of an active loan only (409 otherwise).
            if (state.status !== 'active' || Date.parse(noon(date)) >= windowEnds.getTime())
              continue;
            const owed = Object.fromEntries(balances(ledger));
            const due = withdrawalDue(figures, owed);
            if (due <= 0) {
              withdraw(withdrawalEntries(0, -due, owed), -due);
              check();
            } else
              withdrawalCharge = {
                scope: 'withdrawal',
                status: 'active',
                amount: due,
                expiresAt: windowEnds.toISOString(),
              };
            continue;
          }
          if (step.kind === 'withdrawal-pix' && withdrawalCharge) {
            pix(Math.max(1, Math.floor(withdrawalCharge.amount * step.share)), withdrawalCharge);
            continue;
          }
          const owed = state.status !== 'active' ? 1_000 : payoffAmount(repayment, date, terms);
          pix(Math.max(1, Math.floor(owed * step.share)), undefined);
        }
        // What is left is paid, and what is due back is sent: every account but the clearing
        // accounts and income closes.
        if (state.status === 'active') pix(payoffAmount(repayment, date, terms), undefined);
        if (dueBack > sentBack) ledger.push(...refundEntries(dueBack - sentBack));
        const final = balances(ledger);
        for (const account of ['loan_principal', 'iof_payable', 'refunds_payable'] as const)
          if (account !== 'iof_payable' || state.status === 'cancelled')
            expect(final.get(account) ?? 0).toBe(0);
        const earned =
          -(final.get('interest_income') ?? 0) -
          (final.get('late_fee_income') ?? 0) -
          (final.get('late_interest_income') ?? 0);
        expect(earned).toBeGreaterThanOrEqual(0);
        // Cash kept (in less sent back) is the money lent out plus what the lender earned, and
        // the IOF it owes the Treasury unless the loan was withdrawn.
        const kept = received - dueBack;
        const lentOut = -(final.get('disbursement_clearing') ?? 0) - dueBack;
        expect(kept).toBe(
          lentOut + earned + (state.status === 'cancelled' ? 0 : figures.iof_amount),
        );
      }),
      { numRuns: 150 },
    );
  });
});
