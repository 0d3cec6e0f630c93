import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { reconcileLedger } from '../../src/db/queries/ledger.js';
import { parseBrCode } from '../../src/domain/pix/br-code.js';
import { SANDBOX_PIX_KEY } from '../../src/config.js';
import type { chargeSchema } from '../../src/http/routes/charges/schema.js';
import type { loanTransactionSchema } from '../../src/http/routes/loans/schema.js';
import { activeLoan as activeLoanOf, type LoanBody } from '../helpers/credit.js';
import { fakeCnpj } from '../helpers/customers.js';
import { eventually } from '../helpers/eventually.js';
import { recordHistory } from '../helpers/histories.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { advanceSandboxClock } from '../helpers/sandbox-clock.js';

type ChargeBody = z.infer<typeof chargeSchema>;
type Transaction = z.infer<typeof loanTransactionSchema>;
interface Problem {
  code: string;
  errors?: { path: string; code: string }[];
}

let stack: TestStack;
let api: Client;
let otherPartner: Client;

beforeAll(async () => {
  stack = await startStack({
    env: { SANDBOX_REVIEW_DELAY: '1h', SANDBOX_DISBURSEMENT_DELAY: '60d' },
  });
  const partner = await createPartner(stack);
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
  otherPartner = client(
    stack,
    await tokenFor(stack, (await createPartner(stack, 'Other')).credentials.sandbox),
  );
});
afterAll(async () => {
  await stack?.stop();
});

/** A sandbox loan of 3 rows, `active`: signed in the sandbox, disbursed by ops. */
const activeLoan = () => activeLoanOf(stack, api, { opsToken: OPS_TOKEN });

const charge = (loanId: string, body: Record<string, unknown>) =>
  api(`/v3/loans/${loanId}/charges`, { method: 'POST', body });
const pay = (chargeId: string, body: Record<string, unknown> = {}) =>
  api(`/v3/sandbox/charges/${chargeId}/pay`, { method: 'POST', body });
/** Ops record a payment by hand (a sandbox loan: no second operator needed). */
const opsPay = (loanId: string, body: Record<string, unknown>) =>
  fetch(`${stack.baseUrl}/ops/v1/loans/${loanId}/payments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const transactions = async (loanId: string) =>
  (await json<{ data: Transaction[] }>(api(`/v3/loans/${loanId}/transactions?limit=100`))).data;
type Event = { id: string; type: string; data: { id: string; loan_id?: string } };
/** This partner's events, oldest first, every page read (`query`: the filters). */
const allEvents = async (query = '') => {
  const events: Event[] = [];
  for (let after: string | undefined; ;) {
    const page = await json<{ data: Event[]; has_more: boolean }>(
      api(`/v3/events?order=asc&limit=100${query}${after ? `&starting_after=${after}` : ''}`),
    );
    events.push(...page.data);
    if (!page.has_more) break;
    after = page.data.at(-1)!.id;
  }
  return events;
};
/** The events about a loan (its own and its charges') or a charge: `?resource_id=`. */
const eventsOf = (id: string) => allEvents(`&resource_id=${id}`);

describe('Pix charges (contract §14)', () => {
  it('a charge per installment, paid by Pix, records the payment by itself, once', async () => {
    const loan = await activeLoan();
    const first = await json<ChargeBody>(charge(loan.id, { scope: 'next' }), 201);
    expect(first).toMatchObject({ loan_id: loan.id, status: 'active', scope: 'next' });
    // Before its due date the first row is worth its present value: less than its face.
    expect(first.amount).toBeLessThan(loan.schedule[0]!.installment_amount);
    expect(parseBrCode(first.br_code)).toMatchObject({
      pixKey: SANDBOX_PIX_KEY,
      amount: first.amount,
      txid: first.txid,
    });
    const png = await api(`/v3/charges/${first.id}/qr.png`);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(
      Buffer.from(await png.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect((await otherPartner(`/v3/charges/${first.id}`)).status).toBe(404);

    // A new charge replaces the active one.
    const second = await json<ChargeBody>(charge(loan.id, { scope: 'next' }), 201);
    expect((await json<ChargeBody>(api(`/v3/charges/${first.id}`))).status).toBe('cancelled');
    expect((await pay(first.id)).status).toBe(409);

    const paid = await json<ChargeBody>(pay(second.id));
    expect(paid).toMatchObject({ status: 'paid' });
    expect(paid.payment_reference).toMatch(/^ESANDBOX0\d{12}[A-Za-z0-9]{11}$/);
    const after = await json<LoanBody>(api(`/v3/loans/${loan.id}`));
    expect(after.schedule[0]!.status).toBe('paid');
    expect(after.paid_installments).toBe(1);
    const [, payment] = await transactions(loan.id);
    expect(payment).toMatchObject({
      type: 'payment',
      amount: second.amount,
      reference: paid.payment_reference,
      refund_amount: null,
    });
    expect((await pay(second.id)).status).toBe(409); // paid: no second Pix through the sandbox
    const types = (await eventsOf(second.id)).map((e) => e.type);
    expect(types).toEqual(['charge.created', 'charge.paid']);
    // The filter finds what reading every event would: the loan's own and its charges'.
    const about = (await allEvents()).filter(
      (e) => e.data.id === loan.id || e.data.loan_id === loan.id,
    );
    expect((await eventsOf(loan.id)).map((e) => e.id)).toEqual(about.map((e) => e.id));
    expect(about.map((e) => e.type)).toEqual(
      expect.arrayContaining(['loan.active', 'charge.created', 'charge.paid']),
    );
    expect(
      (await eventsOf(loan.id)).filter((e) => e.type === 'loan.payment_received'),
    ).toHaveLength(1);
    await recordHistory(
      stack.temporal.workflow.getHandle(`pix/${paid.payment_reference}`),
      'pix',
      'booked-through-loan-workflow',
    );
    await recordHistory(
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'charges-created-replaced-paid-by-pix',
    );
  });

  it('refuses what the loan does not allow, naming the field, and writes nothing', async () => {
    const loan = await activeLoan();
    const refused = async (body: Record<string, unknown>, path: string) => {
      const response = await charge(loan.id, body);
      expect(response.status).toBe(422);
      expect(((await response.json()) as Problem).errors?.map((e) => e.path)).toEqual([path]);
    };
    await refused({ scope: 'overdue' }, 'body.scope');
    await refused({ scope: 'amount' }, 'body.amount');
    await refused({ scope: 'next', amount: 100 }, 'body.amount');
    await refused({ scope: 'amount', amount: 100_000_000 }, 'body.amount');
    await refused({ scope: 'next', expires_at: '2020-01-01T00:00:00Z' }, 'body.expires_at');
    await refused({ scope: 'bill' }, 'body.scope');
    const listed = await json<{ data: ChargeBody[] }>(api(`/v3/loans/${loan.id}/charges`));
    expect(listed.data).toEqual([]);
  });

  it('money above the payoff is never refused: the loan settles and the rest is due back', async () => {
    const loan = await activeLoan();
    // On a sandbox clock moved on: every movement is dated on it, refunds as much as the Pix.
    await advanceClock(loan.customer_id, addDaysUtc(loan.release_date, 20, 15));
    const payoff = await json<ChargeBody>(charge(loan.id, { scope: 'payoff' }), 201);
    const paid = await json<ChargeBody>(pay(payoff.id, { amount: payoff.amount + 1_234 }));
    expect(paid.status).toBe('paid');
    const after = await json<LoanBody>(api(`/v3/loans/${loan.id}`));
    expect(after).toMatchObject({ status: 'finished', refund_due_amount: 1_234 });
    const settled = (await transactions(loan.id)).at(-1)!;
    expect(settled).toMatchObject({ type: 'payoff', refund_amount: 1_234 });
    expect(settled.entries).toContainEqual({
      account: 'refunds_payable',
      direction: 'credit',
      amount: 1_234,
    });
    expect((await eventsOf(loan.id)).map((e) => e.type)).toEqual(
      expect.arrayContaining(['loan.finished', 'loan.refund_due']),
    );
    expect(await reconcileLedger(stack.database.db)).toEqual([]);

    // Ops send it back, in parts, each named: never more than is due back.
    const refund = (body: Record<string, unknown>) =>
      fetch(`${stack.baseUrl}/ops/v1/loans/${loan.id}/refunds`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const tooMuch = await refund({ amount: 1_235, reference: 'D-too-much' });
    expect(tooMuch.status).toBe(422);
    expect(((await tooMuch.json()) as Problem).errors).toEqual([
      expect.objectContaining({ path: 'body.amount', code: 'above_refund_due' }),
    ]);
    const part = await json<LoanBody>(refund({ amount: 1_000, reference: 'D-1' }));
    expect(part.refund_due_amount).toBe(234);
    // The same refund again records nothing; another under its reference is a conflict.
    expect(
      (await json<LoanBody>(refund({ amount: 1_000, reference: 'D-1' }))).refund_due_amount,
    ).toBe(234);
    expect((await refund({ amount: 200, reference: 'D-1' })).status).toBe(409);
    // Named by the Pix it returns (its end-to-end id): ops' references and the payment system's
    // are apart, so this is no conflict with the Pix's own transaction (it was a 409).
    expect(
      (await json<LoanBody>(refund({ amount: 234, reference: settled.reference! })))
        .refund_due_amount,
    ).toBe(0);
    const refunds = (await transactions(loan.id)).filter((t) => t.type === 'refund');
    // Sent after the money arrived, on the customer's clock (they were dated in real time, 20 days
    // before the Pix they return).
    for (const sent of refunds)
      expect(Date.parse(sent.occurred_at)).toBeGreaterThanOrEqual(Date.parse(settled.occurred_at));
    expect(refunds.map((t) => [t.amount, t.reference])).toEqual([
      [1_000, 'D-1'],
      [234, settled.reference],
    ]);
    expect(refunds[0]!.entries).toEqual([
      { account: 'refunds_payable', direction: 'debit', amount: 1_000 },
      { account: 'disbursement_clearing', direction: 'credit', amount: 1_000 },
    ]);
    expect((await eventsOf(loan.id)).filter((e) => e.type === 'loan.refund_sent')).toHaveLength(2);
    const ledger = await json<{ accounts: { account: string; balance: number }[] }>(
      fetch(`${stack.baseUrl}/ops/v1/loans/${loan.id}/ledger`, {
        headers: { authorization: `Bearer ${OPS_TOKEN}` },
      }),
    );
    expect(ledger.accounts.find((a) => a.account === 'refunds_payable')?.balance).toBe(0);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
  });

  it('a withdrawal within 7 days returns what was released: the loan is cancelled, its IOF reversed', async () => {
    const loan = await activeLoan();
    const withdrawal = await json<ChargeBody>(
      api(`/v3/loans/${loan.id}/withdrawal`, { method: 'POST' }),
      201,
    );
    expect(withdrawal).toMatchObject({ scope: 'withdrawal', amount: loan.requested_amount });
    await json<ChargeBody>(pay(withdrawal.id));
    const after = await json<LoanBody>(api(`/v3/loans/${loan.id}`));
    expect(after).toMatchObject({
      status: 'cancelled',
      cancellation_reason: 'withdrawal',
      outstanding_amount: 0,
      overdue_amount: 0,
      next_due_date: null,
    });
    // Nothing is owed any more: no row shows an amount due.
    expect(after.schedule.map((row) => row.amount_due)).toEqual(after.schedule.map(() => 0));
    const undone = (await transactions(loan.id)).at(-1)!;
    expect(undone.type).toBe('withdrawal');
    expect(undone.entries).toContainEqual({
      account: 'iof_payable',
      direction: 'debit',
      amount: loan.iof_amount,
    });
    const ledger = await json<{ accounts: { account: string; balance: number }[] }>(
      fetch(`${stack.baseUrl}/ops/v1/loans/${loan.id}/ledger`, {
        headers: { authorization: `Bearer ${OPS_TOKEN}` },
      }),
    );
    for (const account of ['loan_principal', 'iof_payable'])
      expect(ledger.accounts.find((a) => a.account === account)?.balance ?? 0).toBe(0);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    // Over: no more charges, no second withdrawal.
    expect((await api(`/v3/loans/${loan.id}/withdrawal`, { method: 'POST' })).status).toBe(409);
    await recordHistory(stack.temporal.workflow.getHandle(`loan/${loan.id}`), 'loan', 'withdrawal');
  });

  it('a withdrawal charge is paid only by its full amount: a Pix for less, R$ 0.01 included, is a payment', async () => {
    const loan = await activeLoan();
    const withdrawal = await json<ChargeBody>(
      api(`/v3/loans/${loan.id}/withdrawal`, { method: 'POST' }),
      201,
    );
    // Part of what it asks: a payment of §13, and the right to withdraw stays.
    await json<ChargeBody>(pay(withdrawal.id, { amount: 30_000 }));
    expect((await json<LoanBody>(api(`/v3/loans/${loan.id}`))).status).toBe('active');
    expect((await transactions(loan.id)).at(-1)).toMatchObject({ type: 'payment', amount: 30_000 });
    expect((await json<ChargeBody>(api(`/v3/charges/${withdrawal.id}`))).status).toBe('active');
    // Once payments pass the amount released (still short of the payoff, which holds the financed
    // IOF), what the withdrawal returns is below zero: a Pix of R$ 0.01 on the old charge withdrew
    // the loan. It is a payment now.
    await json(
      opsPay(loan.id, {
        amount: loan.requested_amount - 30_000 + 100,
        reference: 'beyond-released',
      }),
    );
    await json<ChargeBody>(pay(withdrawal.id, { amount: 1 }));
    const after = await json<LoanBody>(api(`/v3/loans/${loan.id}`));
    expect(after.status).toBe('active');
    const last = (await transactions(loan.id)).at(-1)!;
    expect(last).toMatchObject({ type: 'payment', amount: 1 });
    expect((await json<ChargeBody>(api(`/v3/charges/${withdrawal.id}`))).status).toBe('active');
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
  });

  it('payments that already reach the amount released: the withdrawal asks nothing and cancels at once, the rest due back', async () => {
    const loan = await activeLoan();
    const next = await json<ChargeBody>(charge(loan.id, { scope: 'next' }), 201);
    // R$ 1.00 more than was released, less than the payoff (which holds the financed IOF).
    await json(opsPay(loan.id, { amount: loan.requested_amount + 100, reference: 'all-of-it' }));
    const withdrawn = await api(`/v3/loans/${loan.id}/withdrawal`, { method: 'POST' });
    expect(withdrawn.status).toBe(200);
    expect(await withdrawn.json()).toMatchObject({
      id: loan.id,
      status: 'cancelled',
      cancellation_reason: 'withdrawal',
      refund_due_amount: 100,
      outstanding_amount: 0,
    });
    const undone = (await transactions(loan.id)).at(-1)!;
    expect(undone).toMatchObject({ type: 'withdrawal', amount: 0, refund_amount: 100 });
    expect(undone.entries).toContainEqual({
      account: 'iof_payable',
      direction: 'debit',
      amount: loan.iof_amount,
    });
    // The loan's active charge goes with it.
    expect((await json<ChargeBody>(api(`/v3/charges/${next.id}`))).status).toBe('cancelled');
    expect((await eventsOf(loan.id)).map((e) => e.type)).toEqual(
      expect.arrayContaining(['loan.cancelled', 'loan.refund_due', 'charge.cancelled']),
    );
    const ledger = await json<{ accounts: { account: string; balance: number }[] }>(
      fetch(`${stack.baseUrl}/ops/v1/loans/${loan.id}/ledger`, {
        headers: { authorization: `Bearer ${OPS_TOKEN}` },
      }),
    );
    for (const account of ['loan_principal', 'iof_payable', 'interest_income'])
      expect(ledger.accounts.find((a) => a.account === account)?.balance ?? 0).toBe(0);
    expect(ledger.accounts.find((a) => a.account === 'refunds_payable')?.balance).toBe(-100);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    expect((await api(`/v3/loans/${loan.id}/withdrawal`, { method: 'POST' })).status).toBe(409);
    await recordHistory(
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'withdrawn-at-once-payments-reached-released',
    );
  });

  it('no withdrawal for a company customer, nor after the 7th day: the last day’s charge expires with the window', async () => {
    const company = await activeLoanOf(stack, api, {
      opsToken: OPS_TOKEN,
      customer: { cnpj: fakeCnpj() },
    });
    const refused = await api(`/v3/loans/${company.id}/withdrawal`, { method: 'POST' });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ code: 'invalid_state' });

    const listed = await json<{ data: ChargeBody[] }>(api(`/v3/loans/${company.id}/charges`));
    expect(listed.data).toEqual([]);

    // The window ends with the 7th day after the release's (São Paulo): on the 7th the right
    // holds, its charge lasting to the day's end; on the 8th it is gone.
    const late = await activeLoan();
    await advanceClock(late.customer_id, addDaysUtc(late.release_date, 7, 12));
    const lastDay = await json<ChargeBody>(
      api(`/v3/loans/${late.id}/withdrawal`, { method: 'POST' }),
      201,
    );
    expect(lastDay.expires_at).toBe(addDaysUtc(late.release_date, 8, 3).toISOString());
    await advanceClock(late.customer_id, addDaysUtc(late.release_date, 8, 12));
    expect((await json<ChargeBody>(api(`/v3/charges/${lastDay.id}`))).status).toBe('expired');
    const tooLate = await api(`/v3/loans/${late.id}/withdrawal`, { method: 'POST' });
    expect(tooLate.status).toBe(409);
    expect(await tooLate.json()).toMatchObject({ code: 'invalid_state' });
    expect((await json<LoanBody>(api(`/v3/loans/${late.id}`))).status).toBe('active');
  });

  it('a charge expires by its durable timer, and by the sandbox clock moving past it', async () => {
    const loan = await activeLoan();
    const soon = new Date(Date.now() + 3_000).toISOString();
    const brief = await json<ChargeBody>(
      charge(loan.id, { scope: 'amount', amount: 10_000, expires_at: soon }),
      201,
    );
    expect(brief.expires_at).toBe(soon);
    const expired = await eventually(async () => {
      const current = await json<ChargeBody>(api(`/v3/charges/${brief.id}`));
      return current.status === 'expired' ? current : undefined;
    }, 'the charge to expire');
    expect(expired.paid_at).toBeNull();
    expect((await pay(brief.id)).status).toBe(409);
    expect((await eventsOf(brief.id)).map((e) => e.type)).toEqual([
      'charge.created',
      'charge.expired',
    ]);

    // A `next` charge lasts until the end of the customer's day: a day on, it has expired.
    const today = await json<ChargeBody>(charge(loan.id, { scope: 'next' }), 201);
    await advanceClock(loan.customer_id, new Date(Date.parse(today.expires_at) + 3_600_000));
    expect((await json<ChargeBody>(api(`/v3/charges/${today.id}`))).status).toBe('expired');
    expect((await eventsOf(today.id)).map((e) => e.type)).toEqual([
      'charge.created',
      'charge.expired',
    ]);
    // The loan still takes a new charge for what its rows owe now.
    expect((await charge(loan.id, { scope: 'next' })).status).toBe(201);
    await recordHistory(
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'charges-expired-by-timer-and-by-clock',
    );
  });
});

/** `date` (yyyy-mm-dd) + `days`, at `hour` UTC. */
const addDaysUtc = (date: string, days: number, hour: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000 + hour * 3_600_000);

/** The customer's sandbox clock to `to`, everything it moves caught up. */
const advanceClock = (customerId: string, to: Date) => advanceSandboxClock(api, customerId, to);
