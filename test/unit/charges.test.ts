import { describe, expect, it } from 'vitest';
import { simulateLoan } from '../../src/domain/credit/simulation.js';
import {
  allocatePayment,
  payoffAmount,
  rowValue,
  startRepayment,
  type RepaymentTerms,
} from '../../src/domain/loans/allocation.js';
import {
  chargeAmount,
  chargeExpiry,
  withdrawalDue,
  withdrawalWindowEnds,
} from '../../src/domain/loans/charges.js';
import { decreeIof as iof } from '../helpers/iof.js';

const terms: RepaymentTerms = {
  monthlyRate: '0.0199',
  lateCharges: { feeRate: '0.02', monthlyInterestRate: '0.01' },
};
const figures = simulateLoan({
  requestedAmount: 100_000,
  installments: 3,
  monthlyInterestRate: '0.0199',
  releaseDate: '2026-03-02',
  firstDueDate: '2026-04-01',
  borrower: 'individual',
  iof,
});
const fresh = () => startRepayment(figures.schedule, figures.principal_amount);

describe('charges (contract §14)', () => {
  it('a next charge pays the oldest row in full; an overdue one every late row; payoff the loan', () => {
    const repayment = fresh();
    const next = chargeAmount('next', repayment, '2026-03-20', terms);
    expect(next).toEqual({ ok: true, amount: rowValue(repayment.rows[0]!, '2026-03-20', terms) });
    const paid = allocatePayment(
      repayment,
      {
        amount: (next as { amount: number }).amount,
        date: '2026-03-20',
        paidAt: '2026-03-20T15:00:00Z',
        applyTo: 'next',
      },
      terms,
    );
    expect(paid.after.rows[0]!.paid_at).not.toBeNull();
    expect(paid.after.rows[1]!.paid_at).toBeNull();
    expect(chargeAmount('overdue', repayment, '2026-03-20', terms)).toMatchObject({
      ok: false,
      code: 'nothing_overdue',
    });
    // 2026-05-05: rows 1 (04-01) and 2 (05-01, Labour Day: late after Monday 05-04) are late.
    const overdue = chargeAmount('overdue', repayment, '2026-05-05', terms);
    expect(overdue.ok && overdue.amount).toBe(
      rowValue(repayment.rows[0]!, '2026-05-05', terms) +
        rowValue(repayment.rows[1]!, '2026-05-05', terms),
    );
    expect(chargeAmount('payoff', repayment, '2026-03-20', terms)).toEqual({
      ok: true,
      amount: payoffAmount(repayment, '2026-03-20', terms),
    });
    expect(chargeAmount('amount', repayment, '2026-03-20', terms, 5_000)).toEqual({
      ok: true,
      amount: 5_000,
    });
    const above = payoffAmount(repayment, '2026-03-20', terms) + 1;
    expect(chargeAmount('amount', repayment, '2026-03-20', terms, above)).toMatchObject({
      ok: false,
      code: 'above_payoff_amount',
    });
  });

  it('a charge for rows lasts the day at most; one of a stated amount 30 days; never the past', () => {
    // 14:00 in São Paulo on 2026-03-20 (UTC−3): the day ends at 03:00 UTC on the 21st.
    const now = new Date('2026-03-20T17:00:00Z');
    const endOfDay = new Date('2026-03-21T03:00:00.000Z');
    expect(chargeExpiry('next', now)).toEqual({ ok: true, expiresAt: endOfDay });
    expect(chargeExpiry('payoff', now, new Date('2026-03-20T18:00:00Z'))).toEqual({
      ok: true,
      expiresAt: new Date('2026-03-20T18:00:00Z'),
    });
    expect(chargeExpiry('overdue', now, new Date(endOfDay.getTime() + 1)).ok).toBe(false);
    expect(chargeExpiry('next', now, now).ok).toBe(false);
    expect(chargeExpiry('amount', now, new Date('2026-04-20T02:59:59Z')).ok).toBe(true);
    expect(chargeExpiry('amount', now, new Date('2026-04-20T03:00:00.001Z')).ok).toBe(false);
  });

  it('the withdrawal window counts 7 days from the day after the disbursement (CDC art. 49)', () => {
    // Disbursed at 23:30 on 2026-03-02 in São Paulo (02:30 UTC on the 3rd): the 7th day after is
    // 03-09, whose end is 03:00 UTC on 03-10.
    expect(withdrawalWindowEnds(new Date('2026-03-03T02:30:00Z'))).toEqual(
      new Date('2026-03-10T03:00:00.000Z'),
    );
    // Nothing paid: the amount released. After a payment of R$ 350.00 (300.00 of principal,
    // 45.00 of interest, 5.00 of late charges), 350.00 less.
    const figures = { requested_amount: 100_000, principal_amount: 102_110 };
    expect(withdrawalDue(figures, { loan_principal: 102_110 })).toBe(100_000);
    expect(
      withdrawalDue(figures, {
        loan_principal: 102_110 - 30_000,
        interest_income: -4_500,
        late_fee_income: -300,
        late_interest_income: -200,
      }),
    ).toBe(65_000);
  });
});
