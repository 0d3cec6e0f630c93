import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { daysBetween } from '../../src/domain/business-date.js';
import {
  iofPaidThroughDays,
  refinancingPrincipal,
  simulateRefinancing,
} from '../../src/domain/credit/refinancing-iof.js';
import { simulateLoan, type IofRates } from '../../src/domain/credit/simulation.js';
import {
  allocatePayment,
  isPaid,
  quotePayoff,
  startRepayment,
} from '../../src/domain/loans/allocation.js';
import { Decimal, formatBrl } from '../../src/domain/money.js';
import { projectRoot } from '../../src/project-root.js';

/** docs/refinancing.md: every figure it states, computed here by the service's own functions. */
const doc = readFileSync(join(projectRoot, 'docs', 'refinancing.md'), 'utf8').replace(/\s+/g, ' ');
const bold = (text: string) => expect(doc).toContain(`**${text}**`);

const iof: IofRates = {
  flat: '0.0038',
  dailyIndividual: '0.000082',
  dailyCompany: '0.000082',
  dailyMei: '0.0000274',
  meiPrincipalLimitAmount: 3_000_000,
};
const terms = {
  monthlyRate: '0.0249',
  lateCharges: { feeRate: '0.02', monthlyInterestRate: '0.01' },
};

describe('docs/refinancing.md', () => {
  it('example 1: the decree’s rule by hand', () => {
    const input = {
      requestedAmount: 1_000_000,
      refinanced: [{ amount: 600_000, elapsedDays: 300, paidThroughDays: 320 }],
      shares: [new Decimal(1)],
      days: [90],
      flat: iof.flat,
      daily: iof.dailyIndividual,
    };
    const refinanced = refinancingPrincipal(input);
    bold(formatBrl(input.requestedAmount));
    bold(formatBrl(600_000));
    bold(formatBrl(refinanced.principal_amount));
    bold(formatBrl(refinanced.iof_amount));
    bold(formatBrl(refinancingPrincipal({ ...input, refinanced: [] }).iof_amount));
  });

  it('example 2: a loan refinanced six weeks in, its payoff as the payoff route quotes it', () => {
    const old = simulateLoan({
      requestedAmount: 100_000,
      installments: 3,
      monthlyInterestRate: terms.monthlyRate,
      releaseDate: '2026-01-05',
      firstDueDate: '2026-02-05',
      borrower: 'individual',
      iof,
    });
    bold(formatBrl(old.requested_amount));
    bold(formatBrl(old.principal_amount));
    for (const row of old.schedule) expect(doc).toContain(formatBrl(row.installment_amount));
    const row1 = old.schedule[0]!;
    const repayment = allocatePayment(
      startRepayment(old.schedule, old.principal_amount),
      {
        amount: row1.installment_amount,
        date: row1.due_date,
        paidAt: `${row1.due_date}T15:00:00.000Z`,
        applyTo: 'next',
      },
      terms,
    ).after;
    const date = '2026-02-20';
    // What `GET /v3/loans/{id}/payoff?date=` answers (src/http/routes/loans: quotePayoff).
    const payoff = quotePayoff(repayment, date, terms).payoffAmount;
    bold(date);
    bold(formatBrl(payoff));
    const elapsed = daysBetween(old.release_date, date);
    expect(doc).toContain(`e = ${elapsed} days`);
    const paidThrough = iofPaidThroughDays(
      repayment.rows
        .filter((row) => !isPaid(row))
        .map((row) => ({
          principal: old.schedule[row.number - 1]!.principal_amount,
          daysFromRelease: daysBetween(old.release_date, row.due_date),
        })),
      elapsed,
    );
    bold(paidThrough.toFixed(2).replace('.', ','));

    const loan = {
      requestedAmount: 200_000,
      installments: 6,
      monthlyInterestRate: terms.monthlyRate,
      releaseDate: date,
      firstDueDate: '2026-03-20',
      borrower: 'individual' as const,
      iof,
    };
    const refinancing = simulateRefinancing(loan, [
      { amount: payoff, elapsedDays: elapsed, paidThroughDays: paidThrough },
    ]);
    bold(formatBrl(loan.requestedAmount));
    bold(formatBrl(loan.requestedAmount - payoff));
    bold(formatBrl(refinancing.principal_amount));
    bold(formatBrl(refinancing.iof_amount));
    bold(formatBrl(simulateLoan(loan).iof_amount));
    expect(refinancing.iof_amount).toBeLessThan(simulateLoan(loan).iof_amount);
  });
});
