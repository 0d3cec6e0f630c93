import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { addDays, startOfBusinessDate } from '../../src/domain/business-date.js';
import { reconcileLedger } from '../../src/db/queries/ledger.js';
import type { loanTransactionSchema } from '../../src/http/routes/loans/schema.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import { recordOpenedHistory } from '../helpers/opened-history.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { advanceSandboxClock } from '../helpers/sandbox-clock.js';

type Transaction = z.infer<typeof loanTransactionSchema>;

/** The write-off period of this file's stack: short, so a clock advance of days reaches it. */
const WRITE_OFF_AFTER_DAYS = 5;

let stack: TestStack;
let api: Client;

/*
 * Contract §17 over HTTP on one stack, time moved by the customer's sandbox clock only (the
 * review and the sandbox disbursement take longer than any test: ops confirm disbursements).
 */
beforeAll(async () => {
  stack = await startStack({
    env: {
      SANDBOX_REVIEW_DELAY: '1h',
      SANDBOX_DISBURSEMENT_DELAY: '60d',
      WRITE_OFF_AFTER_DAYS: String(WRITE_OFF_AFTER_DAYS),
    },
  });
  const partner = await createPartner(stack);
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
});

/** The customer's sandbox clock to `to`, everything it moves caught up. */
const advance = (customerId: string, to: number) => advanceSandboxClock(api, customerId, to);

const loanOf = (id: string) => json<LoanBody>(api(`/v3/loans/${id}`));
const transactionsOf = async (id: string) =>
  (await json<{ data: Transaction[] }>(api(`/v3/loans/${id}/transactions?limit=100`))).data;

describe('write-off (contract §17)', () => {
  it('a row overdue more than WRITE_OFF_AFTER_DAYS writes the loan off; money received later is a recovery', async () => {
    const loan = await activeLoan(stack, api, { opsToken: OPS_TOKEN });
    expect(loan.written_off_at).toBeNull();
    const due = loan.schedule[0]!.due_date;

    // The last day before the period ends: row 1 is overdue, the loan still on the book.
    await advance(loan.customer_id, startOfBusinessDate(addDays(due, WRITE_OFF_AFTER_DAYS)));
    const overdue = await loanOf(loan.id);
    expect(overdue.schedule[0]!.status).toBe('overdue');
    expect(overdue.written_off_at).toBeNull();

    // One day more: overdue more than the period.
    const deadline = startOfBusinessDate(addDays(due, WRITE_OFF_AFTER_DAYS + 1));
    await advance(loan.customer_id, deadline + 3_600_000);
    const written = await eventually(async () => {
      const now = await loanOf(loan.id);
      return now.written_off_at ? now : undefined;
    }, 'the loan written off');
    expect(written.written_off_at).toBe(new Date(deadline).toISOString());
    // An accounting step: the loan repays as before, and the borrower owes what they owed.
    expect(written.status).toBe('active');
    expect(written.schedule.map((row) => row.status)).toEqual(['overdue', 'pending', 'pending']);
    expect(written.outstanding_amount).toBeGreaterThanOrEqual(overdue.outstanding_amount);

    const writeOff = (await transactionsOf(loan.id)).filter((t) => t.type === 'write_off');
    expect(writeOff).toHaveLength(1);
    expect(writeOff[0]!.amount).toBe(loan.principal_amount);
    expect(writeOff[0]!.entries).toEqual([
      { account: 'credit_losses', direction: 'debit', amount: loan.principal_amount },
      { account: 'loan_principal', direction: 'credit', amount: loan.principal_amount },
    ]);
    const events = (
      await json<{ data: { type: string; data: { id: string; written_off_at: string | null } }[] }>(
        api('/v3/events?type=loan.written_off&limit=100'),
      )
    ).data.filter((event) => event.data.id === loan.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.written_off_at).toBe(written.written_off_at);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);

    // A payment afterwards pays the borrower's rows as ever; the book takes it as a recovery.
    const paid = await json<LoanBody>(
      api(`/v3/sandbox/loans/${loan.id}/payments`, { method: 'POST', body: {} }),
    );
    expect(paid.schedule[0]!.status).toBe('paid');
    const payment = (await transactionsOf(loan.id)).find((t) => t.type === 'payment')!;
    // The overdue row with its late charges, as §13 allocates.
    expect(payment.amount).toBeGreaterThan(loan.schedule[0]!.installment_amount);
    expect(payment.entries).toEqual([
      { account: 'collections_clearing', direction: 'debit', amount: payment.amount },
      { account: 'recoveries', direction: 'credit', amount: payment.amount },
    ]);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    // Written off once: the timer does not come back for the next overdue row.
    expect((await loanOf(loan.id)).written_off_at).toBe(written.written_off_at);
    await recordOpenedHistory(
      stack,
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'written-off-then-recovered',
    );
  });
});
