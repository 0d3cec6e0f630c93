import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isBalanced,
  paymentEntries,
  recoveryEntries,
  writeOffEntries,
} from '../../src/domain/ledger/postings.js';
import { writeOffDeadline, writeOffRow } from '../../src/domain/loans/write-off.js';

describe('write-off rules (contract §17)', () => {
  it('moves the unpaid principal from loan_principal to credit_losses', () => {
    expect(writeOffEntries(123_456)).toEqual([
      { account: 'credit_losses', direction: 'debit', amount: 123_456 },
      { account: 'loan_principal', direction: 'credit', amount: 123_456 },
    ]);
  });

  it('books a later payment whole to recoveries, money due back still refunds_payable', () => {
    fc.assert(
      fc.property(
        fc.nat(1_000_000),
        fc.nat(100_000),
        fc.nat(10_000),
        fc.nat(10_000),
        fc.nat(100_000),
        (principal, interest, lateFee, lateInterest, refund) => {
          const paid = principal + interest + lateFee + lateInterest;
          fc.pre(paid + refund > 0);
          const entries = recoveryEntries(
            paymentEntries({
              amount: paid + refund,
              principal,
              interest,
              lateFee,
              lateInterest,
              refund,
            }),
          );
          expect(isBalanced(entries)).toBe(true);
          const credited = (account: string) =>
            entries
              .filter((e) => e.account === account && e.direction === 'credit')
              .reduce((sum, e) => sum + e.amount, 0);
          expect(credited('recoveries')).toBe(paid);
          expect(credited('refunds_payable')).toBe(refund);
          for (const account of [
            'loan_principal',
            'interest_income',
            'late_fee_income',
            'late_interest_income',
          ])
            expect(credited(account)).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('counts days overdue from the due date; only an `overdue` row writes a loan off', () => {
    // 2026-01-10 + 360 days = 2027-01-05; more than 360 days overdue from 2027-01-06, 00:00 BRT.
    expect(new Date(writeOffDeadline('2026-01-10', 360)).toISOString()).toBe(
      '2027-01-06T03:00:00.000Z',
    );
    const rows = [
      { number: 1, due_date: '2026-01-10', status: 'paid' },
      { number: 2, due_date: '2026-02-10', status: 'renegotiated' },
      { number: 3, due_date: '2026-03-10', status: 'overdue' },
    ];
    expect(writeOffRow(rows, '2027-03-05', 360)).toBeUndefined(); // row 3: 360 days exactly
    expect(writeOffRow(rows, '2027-03-06', 360)?.number).toBe(3);
    expect(writeOffRow(rows.slice(0, 2), '2030-01-01', 360)).toBeUndefined();
  });
});
