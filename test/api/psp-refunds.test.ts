import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { reconcileLedger } from '../../src/db/queries/ledger.js';
import { businessDate } from '../../src/domain/business-date.js';
import type { loanTransactionSchema } from '../../src/http/routes/loans/schema.js';
import type { devolucaoSchema } from '../../src/http/routes/refunds/schema.js';
import { pspClientFor } from '../../src/psp/client.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import { eventually } from '../helpers/eventually.js';
import { recordHistory } from '../helpers/histories.js';
import { moneyDesk } from '../helpers/operators.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { valor } from '../helpers/psp.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

type Transaction = z.infer<typeof loanTransactionSchema>;
type Devolucao = z.infer<typeof devolucaoSchema>;

let stack: TestStack;
let production: Client;
let sandbox: Client;
let desk: Awaited<ReturnType<typeof moneyDesk>>;

beforeAll(async () => {
  stack = await startStack({
    // Money due back leaves by devolução 2 s after it became due (a day in production).
    env: { SANDBOX_REVIEW_DELAY: '1h', SANDBOX_DISBURSEMENT_DELAY: '60d', REFUND_AFTER: '2s' },
  });
  const partner = await createPartner(stack);
  production = client(stack, await tokenFor(stack, partner.credentials.production));
  sandbox = client(stack, await tokenFor(stack, partner.credentials.sandbox));
  desk = await moneyDesk(stack);
});
afterAll(async () => {
  await stack?.stop();
});

const opsGet = <T>(path: string) =>
  json<T>(
    fetch(`${stack.baseUrl}/ops/v1${path}`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } }),
  );
const loanOf = (id: string) =>
  json<LoanBody & { refund_due_amount: number }>(production(`/v3/loans/${id}`));
const refundsOf = async (loanId: string) =>
  (
    await json<{ data: Transaction[] }>(production(`/v3/loans/${loanId}/transactions?limit=100`))
  ).data.filter((transaction) => transaction.type === 'refund');
const devolucoesOf = async (loanId: string) =>
  (await opsGet<{ data: Devolucao[] }>(`/loans/${loanId}/devolucoes`)).data;
/** The first devolução of the loan that `where` picks, once there is one. */
const devolucaoWhere = (loanId: string, where: (devolucao: Devolucao) => boolean, what: string) =>
  eventually(async () => (await devolucoesOf(loanId)).find(where), what);
const simulator = () => stack.psp!.control;
/** The refund's workflow, once it has ended (with how), for the replay corpus. */
const refundEnded = async (refundId: string, outcome: string, caseName: string) => {
  const handle = stack.temporal.workflow.getHandle(`refund/${refundId}`);
  expect(await handle.result()).toBe(outcome);
  await recordHistory(handle, 'refund', caseName);
};

/**
 * A payer pays the production loan `extra` centavos above its payoff, through the run's PSP
 * simulator (a charge made at the PSP; the service's own production charges are static until
 * they are registered there), and ops match the Pix to the loan (dual control): the loan is
 * settled and `extra` is due back. Answers the Pix's end-to-end id.
 */
async function overpay(loan: LoanBody, extra: number): Promise<string> {
  // The payoff of São Paulo's today, the day the Pix is paid (a UTC date is tomorrow there from
  // 21:00, and its payoff a day's interest more).
  const today = businessDate(new Date());
  const { payoff_amount } = await json<{ payoff_amount: number }>(
    production(`/v3/loans/${loan.id}/payoff?date=${today}`),
  );
  const txid = `refund${randomBytes(14).toString('hex')}`;
  await pspClientFor(stack.config.psp!).createCob(txid, {
    calendario: { expiracao: 3600 },
    valor: { original: valor(payoff_amount + extra) },
    chave: stack.config.pix.key,
  });
  const paid = (await simulator()('POST', `/charges/${txid}/pay`)) as {
    status: number;
    body: { pix: { endToEndId: string }; notified: unknown };
  };
  expect(paid).toMatchObject({ status: 201, body: { notified: 200 } });
  const e2e = paid.body.pix.endToEndId;
  expect((await desk(`/unmatched-pix/${e2e}/match`, { loan_id: loan.id })).status).toBe(200);
  const settled = await eventually(async () => {
    const now = await loanOf(loan.id);
    return now.status === 'finished' ? now : undefined;
  }, 'the loan settled by the Pix');
  expect(settled.refund_due_amount).toBe(extra);
  return e2e;
}

describe('money due back leaves by devolução (contract §16)', () => {
  it('REFUND_AFTER after it became due, by devolução on the Pix that brought it; booked once when the PSP reports it DEVOLVIDO', async () => {
    const loan = await activeLoan(stack, production, { opsToken: OPS_TOKEN, production: true });
    const e2e = await overpay(loan, 1_234);

    const asked = await devolucaoWhere(
      loan.id,
      (devolucao) => devolucao.status === 'processing',
      'the automatic devolução at the PSP',
    );
    expect(asked).toMatchObject({
      origin: 'automatic',
      end_to_end_id: e2e,
      amount: 1_234,
      actor: null,
      transaction_id: null,
    });
    expect(asked.id).toMatch(/^D[0-9a-f]{32}00$/);
    expect(asked.rtr_id).toMatch(/^D[a-zA-Z0-9]{31}$/);
    // On its way, not gone: still due back, and not to be sent by hand as well.
    expect((await loanOf(loan.id)).refund_due_amount).toBe(1_234);
    expect(await refundsOf(loan.id)).toEqual([]);
    const byHand = await desk(`/loans/${loan.id}/refunds`, { amount: 1, reference: 'by-hand-1' });
    expect(byHand.status).toBe(422);
    expect(await byHand.json()).toMatchObject({ errors: [{ code: 'above_refund_due' }] });

    // The PSP settles it and notifies the Pix again, with its devoluções: booked at once.
    const settled = (await simulator()('POST', `/pix/${e2e}/devolucao/${asked.id}/outcome`, {
      status: 'DEVOLVIDO',
    })) as { status: number; body: { notified: unknown } };
    expect(settled).toMatchObject({ status: 200, body: { notified: 200 } });
    expect((await loanOf(loan.id)).refund_due_amount).toBe(0);
    const [refund, ...more] = await refundsOf(loan.id);
    expect(more).toEqual([]);
    expect(refund).toMatchObject({ amount: 1_234, reference: asked.rtr_id });
    expect(refund!.entries).toEqual(
      expect.arrayContaining([
        { account: 'refunds_payable', direction: 'debit', amount: 1_234 },
        { account: 'disbursement_clearing', direction: 'credit', amount: 1_234 },
      ]),
    );
    expect(await devolucoesOf(loan.id)).toEqual([
      expect.objectContaining({ id: asked.id, status: 'returned', transaction_id: refund!.id }),
    ]);
    const events = await json<{ data: { type: string; data: { id: string; refund?: unknown } }[] }>(
      production('/v3/events?limit=100'),
    );
    const sent = events.data.filter(
      (event) => event.type === 'loan.refund_sent' && event.data.id === loan.id,
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]!.data).toMatchObject({
      refund_due_amount: 0,
      refund: { amount: 1_234, reference: asked.rtr_id },
    });

    // Told again (the PSP repeats a notification): nothing new.
    expect(await simulator()('POST', `/pix/${e2e}/notify`)).toMatchObject({
      status: 200,
      body: { notified: 200 },
    });
    expect(await refundsOf(loan.id)).toHaveLength(1);
    expect((await loanOf(loan.id)).refund_due_amount).toBe(0);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    await refundEnded(asked.refund_id, 'returned', 'automatic-returned');
  });

  it('NAO_REALIZADO leaves it due back, listed with its motivo; ops ask again (checked, dual control) and the workflow finds it DEVOLVIDO though no notification came', async () => {
    const loan = await activeLoan(stack, production, { opsToken: OPS_TOKEN, production: true });
    const e2e = await overpay(loan, 2_000);
    const automatic = await devolucaoWhere(
      loan.id,
      (devolucao) => devolucao.status === 'processing',
      'the automatic devolução at the PSP',
    );
    expect(
      await simulator()('POST', `/pix/${e2e}/devolucao/${automatic.id}/outcome`, {
        status: 'NAO_REALIZADO',
        motivo: 'Conta do pagador encerrada',
      }),
    ).toMatchObject({ status: 200, body: { notified: 200 } });
    expect(await devolucoesOf(loan.id)).toEqual([
      expect.objectContaining({
        id: automatic.id,
        status: 'failed',
        motivo: 'Conta do pagador encerrada',
        transaction_id: null,
      }),
    ]);
    expect((await loanOf(loan.id)).refund_due_amount).toBe(2_000);
    expect(await refundsOf(loan.id)).toEqual([]);
    // Listed with every loan's failed devoluções, newest first, page by page.
    const failed = await opsGet<{ data: Devolucao[] }>('/devolucoes?status=failed&limit=100');
    expect(failed.data).toContainEqual(
      expect.objectContaining({
        id: automatic.id,
        loan_id: loan.id,
        motivo: 'Conta do pagador encerrada',
      }),
    );
    const first = await opsGet<{ data: Devolucao[]; has_more: boolean }>('/devolucoes?limit=1');
    expect(first.data).toHaveLength(1);
    const next = await opsGet<{ data: Devolucao[] }>(
      `/devolucoes?limit=100&starting_after=${first.data[0]!.id}`,
    );
    expect(next.data.map((devolucao) => devolucao.id)).not.toContain(first.data[0]!.id);
    expect(
      (
        await fetch(`${stack.baseUrl}/ops/v1/devolucoes?starting_after=D${'0'.repeat(34)}`, {
          headers: { authorization: `Bearer ${OPS_TOKEN}` },
        })
      ).status,
    ).toBe(400);
    await refundEnded(automatic.refund_id, 'failed', 'automatic-not-done');

    // Checked when asked: nothing is held for approval.
    const ask = (loanId: string, body: unknown) => desk(`/loans/${loanId}/devolucoes`, body);
    expect((await ask(`ln_${randomBytes(16).toString('hex')}`, {})).status).toBe(404);
    const sandboxLoan = await activeLoan(stack, sandbox, { opsToken: OPS_TOKEN });
    const inSandbox = await ask(sandboxLoan.id, {});
    expect(inSandbox.status).toBe(422);
    expect(await inSandbox.json()).toMatchObject({ errors: [{ code: 'not_a_production_loan' }] });
    const tooMuch = await ask(loan.id, { amount: 2_001 });
    expect(tooMuch.status).toBe(422);
    expect(await tooMuch.json()).toMatchObject({ errors: [{ code: 'above_refund_due' }] });
    expect((await ask(loan.id, { amount: 0 })).status).toBe(422);
    expect((await ask(loan.id, { amount: '2000' })).status).toBe(422);
    expect(await devolucoesOf(loan.id)).toHaveLength(1);

    // Asked and approved: all of it, on the same Pix (the failed one returned nothing).
    expect((await ask(loan.id, {})).status).toBe(200);
    const byOps = await devolucaoWhere(
      loan.id,
      (devolucao) => devolucao.origin === 'ops' && devolucao.status === 'processing',
      'the ops devolução at the PSP',
    );
    expect(byOps).toMatchObject({
      end_to_end_id: e2e,
      amount: 2_000,
      actor: { type: 'operator' },
      approved_by: { type: 'operator' },
    });
    // Asked again while it is on its way: nothing left to ask for.
    const again = await ask(loan.id, {});
    expect(again.status).toBe(422);

    // Settled without a notification: the refund's workflow asks the PSP and books it.
    expect(
      await simulator()('POST', `/pix/${e2e}/devolucao/${byOps.id}/outcome`, {
        status: 'DEVOLVIDO',
        notify: false,
      }),
    ).toMatchObject({ status: 200, body: { notified: 'dropped' } });
    await devolucaoWhere(
      loan.id,
      (devolucao) => devolucao.id === byOps.id && devolucao.status === 'returned',
      'the ops devolução booked by the workflow',
    );
    expect((await loanOf(loan.id)).refund_due_amount).toBe(0);
    expect(await refundsOf(loan.id)).toEqual([
      expect.objectContaining({ amount: 2_000, reference: byOps.rtr_id }),
    ]);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    await refundEnded(byOps.refund_id, 'returned', 'ops-polled');
  });
});
