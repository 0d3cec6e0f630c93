import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { z } from 'zod';
import { DEVELOPMENT_PSP_WEBHOOK_SECRET, SANDBOX_PIX_KEY } from '../../src/config.js';
import { reconcileLedger } from '../../src/db/queries/ledger.js';
import { loans, receivedPix } from '../../src/db/schema/index.js';
import { newId } from '../../src/domain/ids.js';
import { txidOfCharge } from '../../src/domain/pix/dynamic-charges.js';
import { parseBrCode } from '../../src/domain/pix/br-code.js';
import { signPspBody } from '../../src/domain/pix/psp-signature.js';
import type { chargeSchema } from '../../src/http/routes/charges/schema.js';
import type { loanTransactionSchema } from '../../src/http/routes/loans/schema.js';
import { PspClient, pspClientFor } from '../../src/psp/client.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import { eventually } from '../helpers/eventually.js';
import { recordHistory } from '../helpers/histories.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { spawnApiProcess } from '../helpers/api-process.js';
import { endToEndId, notifyPsp, nowSeconds, valor } from '../helpers/psp.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

type ChargeBody = z.infer<typeof chargeSchema>;
type Transaction = z.infer<typeof loanTransactionSchema>;

let stack: TestStack;
let production: Client;
let sandbox: Client;

beforeAll(async () => {
  stack = await startStack({
    // A payout with no notification is asked about after a second (then 2 s, 4 s…).
    env: {
      SANDBOX_REVIEW_DELAY: '1h',
      SANDBOX_DISBURSEMENT_DELAY: '60d',
      PAYOUT_POLL_INTERVAL: '1s',
    },
  });
  const partner = await createPartner(stack);
  production = client(stack, await tokenFor(stack, partner.credentials.production));
  sandbox = client(stack, await tokenFor(stack, partner.credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
});

/** The PSP's notification: `body` as sent, signed (by default) the way the contract says. */
const notify = (body: string, signature?: string | null, contentType?: string) =>
  notifyPsp(stack.baseUrl, body, signature, contentType);

const ops = <T>(path: string) =>
  json<T>(fetch(`${stack.baseUrl}${path}`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } }));

const storedPix = async (id: string) =>
  stack.database.db.select().from(receivedPix).where(eq(receivedPix.endToEndId, id));

describe('the PSP’s notification of Pix received (contract §14)', () => {
  it('is refused unauthenticated, 401 before anything is read or stored', async () => {
    const id = endToEndId();
    const body = JSON.stringify({
      pix: [{ endToEndId: id, valor: '10.00', horario: new Date().toISOString() }],
    });
    const signedAt = (seconds: number, secret = DEVELOPMENT_PSP_WEBHOOK_SECRET, signed = body) =>
      signPspBody(secret, signed, seconds);
    const refusals = [
      null,
      'sha256=deadbeef',
      `t=${nowSeconds()}`,
      signedAt(nowSeconds() - 310), // outside the 5-minute window, either way (10 s clear of its edge)
      signedAt(nowSeconds() + 310),
      signedAt(nowSeconds(), 'another-secret-of-enough-length'),
      signedAt(nowSeconds(), DEVELOPMENT_PSP_WEBHOOK_SECRET, body.replace('10.00', '99.00')),
    ];
    for (const signature of refusals) {
      const response = await notify(body, signature);
      expect(response.status, String(signature)).toBe(401);
      expect(await response.json()).toMatchObject({ code: 'unauthorized' });
    }
    // Unauthenticated garbage is a 401 too: the body is not parsed before the signature holds.
    expect((await notify('{not json', null)).status).toBe(401);
    expect(await storedPix(id)).toEqual([]);

    // Within the window, late or early, the same body is taken.
    expect((await notify(body, signedAt(nowSeconds() - 240))).status).toBe(200);
    expect(await storedPix(id)).toHaveLength(1);
  });

  it('takes a signed body on its own terms: JSON only, each Pix valid, members it adds ignored', async () => {
    const horario = new Date().toISOString();
    const pix = (overrides: Record<string, unknown>) =>
      JSON.stringify({
        pix: [{ endToEndId: endToEndId(), valor: '1.00', horario, ...overrides }],
      });
    const invalid = async (body: string, path: string) => {
      const response = await notify(body);
      expect(response.status, body).toBe(422);
      const problem = (await response.json()) as { errors: { path: string }[] };
      expect(problem.errors.map((e) => e.path)).toContain(path);
    };
    await invalid(pix({ valor: '0.00' }), 'body.pix.0.valor');
    await invalid(pix({ valor: '10' }), 'body.pix.0.valor');
    await invalid(pix({ valor: 10 }), 'body.pix.0.valor');
    await invalid(pix({ valor: '10000000000.00' }), 'body.pix.0.valor'); // 11 digits of reais
    await invalid(pix({ valor: '01.00' }), 'body.pix.0.valor');
    await invalid(pix({ endToEndId: 'E123' }), 'body.pix.0.endToEndId');
    await invalid(pix({ txid: 'not a txid' }), 'body.pix.0.txid');
    await invalid(pix({ horario: 'yesterday' }), 'body.pix.0.horario');
    await invalid(pix({ horario: '0020-02-29T00:00:00Z' }), 'body.pix.0.horario'); // before Pix
    await invalid(JSON.stringify({ pix: [] }), 'body.pix');
    expect((await notify('{not json')).status).toBe(400);
    // A body shorter than its Content-Length (the sender gave up) is the sender's 400, not a 500.
    const cutShort = await new Promise<string>((resolve, reject) => {
      const { port } = new URL(stack.baseUrl);
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.end(
          'POST /psp/v1/pix HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"pix": []}',
        );
      });
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
    });
    expect(cutShort).toMatch(/^HTTP\/1\.1 400 /);
    expect((await notify(pix({}), undefined, 'text/plain')).status).toBe(415);

    // The Pix API's other members (payer's message, value parts, refunds) are no reason to refuse.
    const id = endToEndId();
    const fuller = pix({
      endToEndId: id,
      chave: 'lender@example.com',
      infoPagador: 'parcela 1',
      componentesValor: { original: { valor: '1.00' } },
      devolucoes: [],
    });
    expect(await json(notify(fuller))).toEqual({ stored: 1, already_stored: 0 });
    expect(await json(notify(fuller))).toEqual({ stored: 0, already_stored: 1 });
  });

  it('books a charge’s Pix once, however often and however concurrently it is notified', async () => {
    const loan = await activeLoan(stack, production, { opsToken: OPS_TOKEN, production: true });
    const charge = await json<ChargeBody>(
      production(`/v3/loans/${loan.id}/charges`, { method: 'POST', body: { scope: 'next' } }),
      201,
    );
    const id = endToEndId();
    const body = JSON.stringify({
      pix: [
        { endToEndId: id, txid: charge.txid, valor: valor(charge.amount), horario: new Date() },
      ],
    });
    // The PSP retries what it thinks went unanswered: the same notification, 20 times at once.
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        json<{ stored: number; already_stored: number }>(notify(body)),
      ),
    );
    expect(answers.reduce((sum, answer) => sum + answer.stored, 0)).toBe(1);
    expect(answers.reduce((sum, answer) => sum + answer.already_stored, 0)).toBe(19);

    const paid = await eventually(async () => {
      const current = await json<ChargeBody>(production(`/v3/charges/${charge.id}`));
      return current.status === 'paid' ? current : undefined;
    }, 'the charge paid');
    expect(paid.payment_reference).toBe(id);
    const payments = (
      await json<{ data: Transaction[] }>(production(`/v3/loans/${loan.id}/transactions`))
    ).data.filter((t) => t.type === 'payment');
    expect(payments).toEqual([
      expect.objectContaining({ amount: charge.amount, reference: id, refund_amount: null }),
    ]);
    const after = await json<LoanBody>(production(`/v3/loans/${loan.id}`));
    expect(after.schedule[0]!.status).toBe('paid');

    // A second notification after the booking changes nothing either.
    expect(await json(notify(body))).toEqual({ stored: 0, already_stored: 1 });
    const events = (
      await json<{
        data: { type: string; data: { id: string; loan_id?: string; reference?: string } }[];
      }>(production('/v3/events?order=asc&limit=100'))
    ).data.filter(
      (e) => e.data.id === loan.id || e.data.id === charge.id || e.data.loan_id === loan.id,
    );
    expect(events.filter((e) => e.type === 'loan.payment_received')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'charge.paid')).toHaveLength(1);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
  });

  it('books a Pix that arrives after the loan ended, its workflow closed: all of it due back', async () => {
    const loan = await activeLoan(stack, production, { opsToken: OPS_TOKEN, production: true });
    const payoff = await json<ChargeBody>(
      production(`/v3/loans/${loan.id}/charges`, { method: 'POST', body: { scope: 'payoff' } }),
      201,
    );
    const pixOf = (id: string) =>
      JSON.stringify({
        pix: [
          {
            endToEndId: id,
            txid: payoff.txid,
            valor: valor(payoff.amount),
            horario: new Date().toISOString(),
          },
        ],
      });
    const first = endToEndId();
    await json(notify(pixOf(first)));
    await eventually(async () => {
      const current = await json<LoanBody>(production(`/v3/loans/${loan.id}`));
      return current.status === 'finished' ? current : undefined;
    }, 'the loan paid off');
    // The loan's workflow ends with the loan: nothing is left for it to wait for.
    const workflow = stack.temporal.workflow.getHandle(`loan/${loan.id}`);
    await workflow.result();

    // The payer's bank sends the same charge's amount again: money that arrives is kept.
    const late = endToEndId();
    expect(await json(notify(pixOf(late)))).toEqual({ stored: 1, already_stored: 0 });
    const booked = await eventually(async () => {
      const all = (
        await json<{ data: Transaction[] }>(production(`/v3/loans/${loan.id}/transactions`))
      ).data;
      return all.find((t) => t.reference === late);
    }, 'the late Pix booked');
    expect(booked).toMatchObject({ type: 'overpayment', amount: payoff.amount });
    expect(booked.entries).toContainEqual({
      account: 'refunds_payable',
      direction: 'credit',
      amount: payoff.amount,
    });
    const after = await json<LoanBody>(production(`/v3/loans/${loan.id}`));
    expect(after).toMatchObject({ status: 'finished', refund_due_amount: payoff.amount });
    expect((await storedPix(late))[0]).toMatchObject({ status: 'recorded' });
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    // The loan settled by a payoff charge's Pix, and the late Pix booked without its workflow.
    await recordHistory(workflow, 'loan', 'payoff-charge-paid-by-pix-to-finished');
    await recordHistory(
      stack.temporal.workflow.getHandle(`pix/${first}`),
      'pix',
      'booked-through-loan-workflow-finishing-it',
    );
    await recordHistory(
      stack.temporal.workflow.getHandle(`pix/${late}`),
      'pix',
      'booked-directly-after-loan-workflow-closed',
    );
  });

  it('keeps a Pix that names no charge of production for ops: listed, counted, never booked', async () => {
    // A sandbox charge's txid is no production charge: the PSP's Pix are production's.
    const sandboxLoan = await activeLoan(stack, sandbox, { opsToken: OPS_TOKEN });
    const sandboxCharge = await json<ChargeBody>(
      sandbox(`/v3/loans/${sandboxLoan.id}/charges`, { method: 'POST', body: { scope: 'next' } }),
      201,
    );
    const horario = '2026-11-25T10:00:00.000-03:00';
    const ids = [endToEndId(), endToEndId(), endToEndId()];
    const body = JSON.stringify({
      pix: [
        { endToEndId: ids[0], txid: 'UNKNOWNTXID0000000000000000', valor: '12.34', horario },
        { endToEndId: ids[1], valor: '0.01', horario }, // to the key, without a txid
        {
          endToEndId: ids[2],
          txid: sandboxCharge.txid,
          valor: valor(sandboxCharge.amount),
          horario,
        },
      ],
    });
    expect(await json(notify(body))).toEqual({ stored: 3, already_stored: 0 });

    const listed: { end_to_end_id: string }[] = [];
    let page = await ops<{ data: { end_to_end_id: string }[]; has_more: boolean }>(
      '/ops/v1/unmatched-pix?limit=1',
    );
    listed.push(...page.data);
    while (page.has_more) {
      page = await ops(
        `/ops/v1/unmatched-pix?limit=2&starting_after=${listed.at(-1)!.end_to_end_id}`,
      );
      listed.push(...page.data);
    }
    const ours = listed.filter((pix) => ids.includes(pix.end_to_end_id));
    expect(ours).toHaveLength(3);
    expect(ours).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          end_to_end_id: ids[0],
          txid: 'UNKNOWNTXID0000000000000000',
          amount: 1_234,
          paid_at: '2026-11-25T13:00:00.000Z',
        }),
        expect.objectContaining({ end_to_end_id: ids[1], txid: null, amount: 1 }),
        expect.objectContaining({ end_to_end_id: ids[2], txid: sandboxCharge.txid }),
      ]),
    );
    const unknownCursor = await fetch(
      `${stack.baseUrl}/ops/v1/unmatched-pix?starting_after=${endToEndId()}`,
      { headers: { authorization: `Bearer ${OPS_TOKEN}` } },
    );
    expect(unknownCursor.status).toBe(400);

    const metrics = await (
      await fetch(`${stack.baseUrl}/metrics`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } })
    ).text();
    const gauge = Number(/^unmatched_pix (\d+)$/m.exec(metrics)?.[1]);
    expect(gauge).toBeGreaterThanOrEqual(3);
    // The sandbox charge is untouched by a production Pix, and stays the static code the service
    // composes (contract §16: the sandbox's charges never reach the PSP).
    expect((await json<ChargeBody>(sandbox(`/v3/charges/${sandboxCharge.id}`))).status).toBe(
      'active',
    );
    expect(parseBrCode(sandboxCharge.br_code)).toMatchObject({
      pixKey: SANDBOX_PIX_KEY,
      amount: sandboxCharge.amount,
      txid: sandboxCharge.txid,
    });
  });

  it('under PSP_WEBHOOK_AUTH=mtls, takes the proxy’s verified client certificate only: from the proxy’s address, verified, the PSP’s subject (issue 37, finding 5)', async () => {
    const subject = 'CN=psp.example.com,O=PSP Exemplo S.A.,C=BR';
    // The proxy in front is on 127.0.0.1; 127.0.0.2 is another host of the loopback network.
    const api = await spawnApiProcess(stack, {
      env: {
        PSP_WEBHOOK_AUTH: 'mtls',
        PSP_MTLS_TRUSTED_PROXIES: '127.0.0.1',
        PSP_MTLS_SUBJECT: subject,
      },
    });
    try {
      const port = Number(new URL(api.baseUrl).port);
      /** The review's forged Pix: no signature, R$ 500.00 to the lender's key. */
      const forge = (from: string, headers: Record<string, string>) => {
        const id = endToEndId();
        const body = JSON.stringify({
          pix: [{ endToEndId: id, valor: '500.00', horario: new Date().toISOString() }],
        });
        return new Promise<{ id: string; status: number; body: string }>((resolve, reject) => {
          const request = httpRequest(
            {
              host: '127.0.0.1',
              port,
              localAddress: from,
              method: 'POST',
              path: '/psp/v1/pix',
              headers: { 'content-type': 'application/json', ...headers },
            },
            (response) => {
              let text = '';
              response.on('data', (chunk: Buffer) => (text += chunk.toString()));
              response.on('end', () => resolve({ id, status: response.statusCode!, body: text }));
            },
          );
          request.on('error', reject);
          request.end(body);
        });
      };
      const verified = { 'x-ssl-client-verify': 'SUCCESS', 'x-ssl-client-s-dn': subject };
      const refusals = [
        forge('127.0.0.1', {}),
        forge('127.0.0.2', verified),
        forge('127.0.0.1', { ...verified, 'x-ssl-client-s-dn': 'CN=someone-else.example' }),
        forge('127.0.0.1', { ...verified, 'x-ssl-client-verify': 'FAILED:certificate expired' }),
        forge('127.0.0.1', { 'x-ssl-client-s-dn': subject }),
        // A signature means nothing here, even a right one.
        forge('127.0.0.1', {
          'pix-signature': signPspBody(DEVELOPMENT_PSP_WEBHOOK_SECRET, '{}', nowSeconds()),
        }),
      ];
      for (const refused of await Promise.all(refusals)) {
        expect(refused.status, refused.body).toBe(401);
        expect(JSON.parse(refused.body)).toMatchObject({ code: 'unauthorized' });
        expect(await storedPix(refused.id)).toEqual([]);
      }
      const accepted = await forge('127.0.0.1', verified);
      expect(accepted.status, accepted.body).toBe(200);
      expect(await storedPix(accepted.id)).toHaveLength(1);
    } finally {
      await api.stop();
    }
  });
});

describe('production charges are the PSP’s (contract §16, “Charges are dynamic”)', () => {
  const simulator = () => stack.psp!;
  const pay = (txid: string) =>
    simulator().control('POST', `/charges/${txid}/pay`) as Promise<{
      status: number;
      body: { notified?: unknown; pix?: { endToEndId: string; valor: string }; detail?: string };
    }>;
  const chargeOf = (id: string) => json<ChargeBody>(production(`/v3/charges/${id}`));
  const charge = (loanId: string, body: Record<string, unknown>) =>
    json<ChargeBody>(production(`/v3/loans/${loanId}/charges`, { method: 'POST', body }), 201);

  it('registers an installment’s charge as a cobv with the loan’s multa and juros; its pixCopiaECola is the br_code, and paying it at the PSP books the row', async () => {
    const loan = await activeLoan(stack, production, { opsToken: OPS_TOKEN, production: true });
    const next = await charge(loan.id, { scope: 'next' });
    const psp = pspClientFor(stack.config.psp!);
    try {
      const cobv = await psp.getCobv(next.txid);
      expect(cobv).toMatchObject({
        txid: next.txid,
        status: 'ATIVA',
        calendario: { dataDeVencimento: loan.schedule[0]!.due_date, validadeAposVencimento: 0 },
        // The loan's LATE_FEE_RATE 0.02 and LATE_INTEREST_MONTHLY_RATE 0.01, as the API Pix writes them.
        valor: {
          original: valor(next.amount),
          multa: { modalidade: 2, valorPerc: '2.00' },
          juros: { modalidade: 3, valorPerc: '1.00' },
        },
        chave: stack.config.pix.key,
        devedor: { cpf: expect.stringMatching(/^\d{11}$/) as unknown },
      });
      expect(next.br_code).toBe(cobv.pixCopiaECola);
      // A dynamic code names the PSP's location, not our key, amount and txid.
      expect(() => parseBrCode(next.br_code)).toThrow(/not a static/);

      // The payer pays what the PSP asks; the PSP notifies this stack's API, which books it.
      const paid = await pay(next.txid);
      expect(paid).toMatchObject({
        status: 201,
        body: { notified: 200, pix: { valor: valor(next.amount) } },
      });
      const settled = await eventually(async () => {
        const current = await chargeOf(next.id);
        return current.status === 'paid' ? current : undefined;
      }, 'the charge paid');
      expect(settled.payment_reference).toBe(paid.body.pix!.endToEndId);
      const after = await json<LoanBody>(production(`/v3/loans/${loan.id}`));
      expect(after.schedule[0]!.status).toBe('paid');
      expect(after.schedule[1]!.status).not.toBe('paid');
      const payments = (
        await json<{ data: Transaction[] }>(production(`/v3/loans/${loan.id}/transactions`))
      ).data.filter((t) => t.type === 'payment');
      expect(payments).toEqual([
        expect.objectContaining({ amount: next.amount, reference: paid.body.pix!.endToEndId }),
      ]);
      expect(await reconcileLedger(stack.database.db)).toEqual([]);
      // Paid once: the PSP takes no second Pix on it.
      expect((await pay(next.txid)).status).toBe(409);
    } finally {
      psp.close();
    }
  });

  it('removes at the PSP a charge replaced by a newer one, and a cob past its short expiracao: the PSP refuses to pay either', async () => {
    const loan = await activeLoan(stack, production, { opsToken: OPS_TOKEN, production: true });
    const psp = pspClientFor(stack.config.psp!);
    try {
      const payoff = await charge(loan.id, { scope: 'payoff' });
      const cob = await psp.getCob(payoff.txid);
      expect(cob).toMatchObject({
        status: 'ATIVA',
        valor: { original: valor(payoff.amount) },
        pixCopiaECola: payoff.br_code,
      });
      // It lasts at the PSP until the charge's end (the end of today), give or take a second.
      const endsAt = Date.parse(cob.calendario.criacao) + cob.calendario.expiracao * 1000;
      expect(Math.abs(endsAt - Date.parse(payoff.expires_at))).toBeLessThan(2_000);

      // A newer charge replaces it: cancelled here, removed at the PSP before the 201.
      const short = await charge(loan.id, {
        scope: 'amount',
        amount: 1_000,
        expires_at: new Date(Date.now() + 3_000).toISOString(),
      });
      expect((await chargeOf(payoff.id)).status).toBe('cancelled');
      expect((await psp.getCob(payoff.txid)).status).toBe('REMOVIDA_PELO_USUARIO_RECEBEDOR');
      expect(await pay(payoff.txid)).toMatchObject({
        status: 409,
        body: { detail: expect.stringMatching(/REMOVIDA_PELO_USUARIO_RECEBEDOR/) as unknown },
      });

      // The short one: a cob of a few seconds, refused by the PSP once they are over.
      const shortCob = await psp.getCob(short.txid);
      expect(shortCob.calendario.expiracao).toBeGreaterThanOrEqual(1);
      expect(shortCob.calendario.expiracao).toBeLessThanOrEqual(3);
      const shortEnds =
        Date.parse(shortCob.calendario.criacao) + shortCob.calendario.expiracao * 1000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, shortEnds - Date.now()) + 50));
      expect(await pay(short.txid)).toMatchObject({
        status: 409,
        body: { detail: expect.stringMatching(/expired|REMOVIDA/) as unknown },
      });
      // Its timer expires it here and removes it at the PSP too.
      await eventually(async () => {
        const current = await chargeOf(short.id);
        return current.status === 'expired' ? current : undefined;
      }, 'the short charge expired');
      await eventually(async () => {
        const current = await psp.getCob(short.txid);
        return current.status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR' ? current : undefined;
      }, 'the short charge removed at the PSP');
      // Nothing was paid.
      const transactions = (
        await json<{ data: Transaction[] }>(production(`/v3/loans/${loan.id}/transactions`))
      ).data;
      expect(transactions.filter((t) => t.type !== 'disbursement')).toEqual([]);
    } finally {
      psp.close();
    }
  });

  it('registers a charge once however often its activity runs: retried after a crash before its commit or after it, the PSP holds one charge and the partner sees its code', async () => {
    const loan = await activeLoan(stack, production, { opsToken: OPS_TOKEN, production: true });
    const [owner] = await stack.database.db
      .select({ partnerId: loans.partnerId })
      .from(loans)
      .where(eq(loans.id, loan.id));
    const activities = stack.activities();
    const chargeId = newId('chg');
    const txid = txidOfCharge(chargeId);
    // What the loan's workflow hands the activity, the same on every attempt.
    const input = {
      tenant: { partnerId: owner!.partnerId, environment: 'production' as const },
      loanId: loan.id,
      request: { chargeId, scope: 'payoff' as const },
      at: new Date().toISOString(),
      hasCnpj: false,
      eventIds: { created: newId('evt'), cancelled: newId('evt') },
    };
    const psp = pspClientFor(stack.config.psp!);
    try {
      // A first attempt registered it at the PSP and died before its commit: the PSP holds it,
      // the service does not.
      const first = await psp.createCob(txid, {
        calendario: { expiracao: 3600 },
        valor: { original: '1.00' },
        chave: stack.config.pix.key,
      });
      expect((await production(`/v3/charges/${chargeId}`)).status).toBe(404);

      // The retry registers it again (a revision at the same location) and writes it.
      const created = await activities.createCharge(input);
      expect(created).toMatchObject({ chargeId, status: 'active' });
      const written = await chargeOf(chargeId);
      const cob = await psp.getCob(txid);
      expect(cob).toMatchObject({
        revisao: 1,
        status: 'ATIVA',
        valor: { original: valor(written.amount) },
        pixCopiaECola: first.pixCopiaECola,
      });
      expect(written).toMatchObject({ txid, status: 'active', br_code: first.pixCopiaECola });

      // An attempt that died after its commit: the retry answers the charge written and asks the
      // PSP nothing more.
      expect(await activities.createCharge(input)).toEqual(created);
      expect((await psp.getCob(txid)).revisao).toBe(1);
      const listed = (
        await json<{ data: ChargeBody[] }>(production(`/v3/loans/${loan.id}/charges`))
      ).data;
      expect(listed.filter((c) => c.txid === txid)).toHaveLength(1);
    } finally {
      psp.close();
    }
  });

  it('answers a PSP that is down with a 503 to retry and one that refuses with a 502, writing nothing; a removal the PSP missed is done by the housekeeping', async () => {
    const loan = await activeLoan(stack, production, { opsToken: OPS_TOKEN, production: true });
    const client = simulator().clientId;
    const fault = (body: Record<string, unknown>) =>
      simulator().control('POST', '/faults', { client, ...body });
    const charges = async () =>
      (await json<{ data: ChargeBody[] }>(production(`/v3/loans/${loan.id}/charges`))).data;
    const psp = pspClientFor(stack.config.psp!);
    try {
      // Down for every attempt the charge gets: 503, nothing written.
      expect(await fault({ status: 503, count: 3, method: 'PUT', path: '/cob' })).toMatchObject({
        status: 200,
      });
      const down = await production(`/v3/loans/${loan.id}/charges`, {
        method: 'POST',
        body: { scope: 'payoff' },
      });
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('5');
      expect(await down.json()).toMatchObject({ code: 'psp_unavailable', status: 503 });
      expect(await charges()).toEqual([]);

      // Down for one attempt: the activity's retry registers it.
      await fault({ status: 503, count: 1, method: 'PUT', path: '/cob' });
      const payoff = await charge(loan.id, { scope: 'payoff' });
      expect((await psp.getCob(payoff.txid)).status).toBe('ATIVA');

      // Refused: 502 at once, and the active charge stays as it was.
      await fault({ status: 400, count: 1, method: 'PUT', path: '/cob' });
      const refused = await production(`/v3/loans/${loan.id}/charges`, {
        method: 'POST',
        body: { scope: 'amount', amount: 500 },
      });
      expect(refused.status).toBe(502);
      expect(await refused.json()).toMatchObject({ code: 'psp_refused', status: 502 });
      expect((await charges()).map((c) => [c.id, c.status])).toEqual([[payoff.id, 'active']]);

      // The PSP takes the next charge but not the removal of the one it replaces: cancelled here
      // at once, still payable there until the PSP is back and the worker's housekeeping removes it.
      await fault({ status: 503, count: 1000, method: 'PATCH', path: '/cob/' });
      const amount = await charge(loan.id, { scope: 'amount', amount: 500 });
      expect((await chargeOf(payoff.id)).status).toBe('cancelled');
      expect((await psp.getCob(payoff.txid)).status).toBe('ATIVA');
      expect(await simulator().control('POST', '/faults/clear', { client })).toMatchObject({
        status: 200,
        body: { client, faults: [] },
      });
      await eventually(async () => {
        const current = await psp.getCob(payoff.txid);
        return current.status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR' ? current : undefined;
      }, 'the replaced charge removed by the housekeeping');
      expect((await pay(payoff.txid)).status).toBe(409);
      expect((await chargeOf(amount.id)).status).toBe('active');
    } finally {
      await simulator().control('POST', '/faults/clear', { client });
      psp.close();
    }
  });
});

describe('the run’s PSP simulator, this stack’s PSP (contract §16)', () => {
  const txid = () => `stack${randomBytes(12).toString('hex')}`;
  const cob = (chave: string, original: string) => ({
    calendario: { expiracao: 3600 },
    valor: { original },
    chave,
  });

  it('takes a charge made with the stack’s PSP settings and notifies this stack’s API of its Pix, signed; another account neither sees it nor notifies here, nor shares its payouts', async () => {
    const simulator = stack.psp!;
    const psp = pspClientFor(stack.config.psp!);
    // Another account at the same simulator (another test file's stack, say), notified nowhere.
    const otherSecret = randomBytes(24).toString('hex');
    const otherId = `other-${randomBytes(6).toString('hex')}`;
    expect(
      await simulator.control('PUT', `/clients/${otherId}`, { secret: otherSecret }),
    ).toMatchObject({ status: 201 });
    const pki = inject('pspSimulator');
    const other = new PspClient({
      apiUrl: stack.config.psp!.apiUrl,
      clientId: otherId,
      clientSecret: otherSecret,
      tls: {
        cert: readFileSync(pki.clientCertFile, 'utf8'),
        key: readFileSync(pki.clientKeyFile, 'utf8'),
        ca: readFileSync(pki.caFile, 'utf8'),
      },
    });
    try {
      const ours = txid();
      await psp.createCob(ours, cob(stack.config.pix.key, '12.34'));
      const paid = (await simulator.control('POST', `/charges/${ours}/pay`)) as {
        status: number;
        body: { notified: unknown; pix: { endToEndId: string } };
      };
      // Notified to this stack's POST /psp/v1/pix, which checked the signature and stored it.
      expect(paid).toMatchObject({ status: 201, body: { notified: 200, pix: { txid: ours } } });
      expect(await storedPix(paid.body.pix.endToEndId)).toEqual([
        expect.objectContaining({ txid: ours, amount: 1_234 }),
      ]);

      // The other account cannot read our charge, nor list our Pix; its own Pix goes nowhere here.
      await expect(other.getCob(ours)).rejects.toMatchObject({ status: 404 });
      const theirs = txid();
      await other.createCob(theirs, cob(stack.config.pix.key, '5.00'));
      const unseen = (await simulator.control('POST', `/charges/${theirs}/pay`)) as {
        body: { notified: unknown; pix: { endToEndId: string } };
      };
      expect(unseen.body.notified).toBeNull();
      expect(await storedPix(unseen.body.pix.endToEndId)).toEqual([]);
      const window = [new Date(Date.now() - 60_000), new Date(Date.now() + 60_000)] as const;
      expect((await psp.listPix(...window)).map((pix) => pix.txid)).toContain(ours);
      expect((await psp.listPix(...window)).map((pix) => pix.txid)).not.toContain(theirs);
      expect((await other.listPix(...window)).map((pix) => pix.txid)).toEqual([theirs]);

      // Payouts too: each account's policy is its own, and a payout is its account's alone.
      expect(
        await simulator.control('PUT', '/payouts/policy', { outcome: 'pending', client: otherId }),
      ).toMatchObject({ status: 200 });
      const payout = { amount: 1_000, beneficiary: { pixKey: '12345678909' } };
      const sent = await psp.sendPayout(`claim_${txid()}`, payout);
      const held = await other.sendPayout(`claim_${txid()}`, payout);
      expect([sent.status, held.status]).toEqual(['confirmed', 'pending']);
      await expect(other.getPayout(sent.id)).rejects.toMatchObject({ status: 404 });
      expect(await psp.getPayout(sent.id)).toMatchObject({ id: sent.id, status: 'confirmed' });
      // Its outcome is posted to this stack's API (whose route for payout outcomes comes with the
      // disbursement part), the other's to nobody.
      const again = (await simulator.control('POST', `/payouts/${sent.id}/notify`)) as {
        body: { notified: unknown };
      };
      expect(again.body.notified).toEqual(expect.any(Number));
      const theirsSettled = (await simulator.control('POST', `/payouts/${held.id}/confirm`)) as {
        body: { notified: unknown };
      };
      expect(theirsSettled.body.notified).toBeNull();
    } finally {
      psp.close();
      other.close();
    }

    // The simulator posts to this machine only: another address is refused before any connection.
    const offMachine = await simulator.control('PUT', `/clients/${otherId}`, {
      secret: otherSecret,
      notify: { url: 'http://10.0.0.1/psp/v1/pix', secret: DEVELOPMENT_PSP_WEBHOOK_SECRET },
    });
    expect(offMachine.status).toBe(400);
    expect(JSON.stringify(offMachine.body)).toMatch(/notify\.url: http\(s\) on loopback only/);
  });
});

describe('a production loan disbursed by payout (contract §16)', () => {
  type PayoutView = {
    id: string;
    status: string;
    amount: number;
    beneficiary: { pix_key: string };
    psp_payout_id: string | null;
    end_to_end_id: string | null;
    failure_reason: string | null;
  };
  type SimulatedPayout = {
    id: string;
    idempotencyKey: string;
    status: string;
    amount: number;
    beneficiary: { pixKey?: string };
  };
  const opsPost = (path: string, body: unknown = {}) =>
    fetch(`${stack.baseUrl}/ops/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const payoutOf = async (loanId: string) =>
    (await ops<{ payout: PayoutView | null }>(`/ops/v1/loans/${loanId}/payout`)).payout;
  /** This stack's payouts at the simulator (its account's), oldest first. */
  const simulatedPayouts = async () =>
    (
      (await stack.psp!.control('GET', `/clients/${stack.psp!.clientId}/payouts`)) as {
        body: { payouts: SimulatedPayout[] };
      }
    ).body.payouts;
  const policy = (outcome: 'confirmed' | 'pending' | 'failed', failureReason?: string) =>
    stack.psp!.control('PUT', '/payouts/policy', {
      outcome,
      client: stack.psp!.clientId,
      ...(failureReason ? { failureReason } : {}),
    });
  const loanNow = (id: string) => json<LoanBody>(production(`/v3/loans/${id}`));
  const until = (id: string, status: string) =>
    eventually(async () => {
      const loan = await loanNow(id);
      return loan.status === status ? loan : undefined;
    }, `the loan ${status}`);
  const eventsOf = async (loanId: string, type: string) =>
    (
      await json<{ data: { type: string; data: { id: string } }[] }>(
        production(`/v3/events?resource_id=${loanId}&order=asc&limit=100`),
      )
    ).data.filter((e) => e.type === type && e.data.id === loanId);
  const transactionsOf = async (loanId: string) =>
    (await json<{ data: Transaction[] }>(production(`/v3/loans/${loanId}/transactions`))).data;
  /** A signed production loan, its disbursement claimed by ops. */
  const claimed = async () => {
    const loan = await activeLoan(stack, production, {
      opsToken: OPS_TOKEN,
      production: true,
      signedOnly: true,
    });
    expect(loan.status).toBe('processing');
    expect((await opsPost(`/loans/${loan.id}/disbursement/claim`)).status).toBe(200);
    return loan;
  };
  const payoutNotification = (payout: SimulatedPayout & Record<string, unknown>) =>
    JSON.stringify({ payouts: [payout] });
  const notifyPayouts = (body: string, signature?: string | null) =>
    fetch(`${stack.baseUrl}/psp/v1/payouts`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(signature === null
          ? {}
          : {
              'pix-signature':
                signature ?? signPspBody(DEVELOPMENT_PSP_WEBHOOK_SECRET, body, nowSeconds()),
            }),
      },
      body,
    });

  it('claimed, it is paid out once and active on the PSP’s confirmation; a repeated notification changes nothing, an unsigned one is 401; returned after a payment, the loan is cancelled and undone, the payment due back', async () => {
    const loan = await claimed();
    const active = await until(loan.id, 'active');
    expect(active.disbursement_status).toBe('confirmed');

    // One payout at the PSP, under the payout's id, for the amount released, to the borrower's key.
    const payout = (await payoutOf(loan.id))!;
    expect(payout).toMatchObject({
      id: expect.stringMatching(/^pyt_[0-9a-f]{32}$/) as unknown,
      status: 'confirmed',
      amount: loan.requested_amount,
      end_to_end_id: expect.stringMatching(/^E[0-9A-Za-z]{31}$/) as unknown,
    });
    expect(payout.beneficiary.pix_key).toBe(
      loan.disbursement_account.type === 'pix' ? loan.disbursement_account.pix_key : null,
    );
    const atPsp = (await simulatedPayouts()).filter((p) => p.idempotencyKey === payout.id);
    expect(atPsp).toEqual([
      expect.objectContaining({
        id: payout.psp_payout_id,
        status: 'confirmed',
        amount: loan.requested_amount,
        beneficiary: { pixKey: payout.beneficiary.pix_key },
      }),
    ]);
    expect((await transactionsOf(loan.id)).map((t) => t.type)).toEqual(['disbursement']);
    expect(await eventsOf(loan.id, 'loan.active')).toHaveLength(1);
    // Too late to report by hand: the payout did.
    expect((await opsPost(`/loans/${loan.id}/disbursement`, { outcome: 'confirmed' })).status).toBe(
      409,
    );

    // The PSP notifies the same outcome again: recorded before, nothing changes.
    const again = (await stack.psp!.control('POST', `/payouts/${payout.psp_payout_id}/notify`)) as {
      body: { notified: unknown };
    };
    expect(again.body.notified).toBe(200);
    const duplicate = await json<{ recorded: number; unchanged: number; unknown: number }>(
      notifyPayouts(payoutNotification({ ...atPsp[0]!, updatedAt: new Date().toISOString() })),
    );
    expect(duplicate).toEqual({ recorded: 0, unchanged: 1, unknown: 0 });
    // A forged return, unsigned or badly signed: 401, and the loan stays active.
    const forged = payoutNotification({
      ...atPsp[0]!,
      status: 'returned',
      endToEndId: payout.end_to_end_id,
      returnReason: 'AC06',
      updatedAt: new Date().toISOString(),
    });
    for (const signature of [
      null,
      signPspBody('another-secret-of-enough-length', forged, nowSeconds()),
      signPspBody(DEVELOPMENT_PSP_WEBHOOK_SECRET, forged, nowSeconds() - 400),
    ]) {
      const refused = await notifyPayouts(forged, signature);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ code: 'unauthorized' });
    }
    // Invalid outcomes of a signed notification: 422 naming each field.
    const invalid = await notifyPayouts(
      JSON.stringify({ payouts: [{ ...atPsp[0]!, id: 'x', status: 'lost' }] }),
    );
    expect(invalid.status).toBe(422);
    expect(
      ((await invalid.json()) as { errors: { path: string }[] }).errors.map((e) => e.path),
    ).toEqual(expect.arrayContaining(['body.payouts.0.id', 'body.payouts.0.status']));
    expect(await loanNow(loan.id)).toMatchObject({ status: 'active' });
    expect((await transactionsOf(loan.id)).map((t) => t.type)).toEqual(['disbursement']);
    expect(await eventsOf(loan.id, 'loan.active')).toHaveLength(1);

    // The borrower pays row 1 by Pix; then the receiving bank gives the payout back.
    const charge = await json<ChargeBody>(
      production(`/v3/loans/${loan.id}/charges`, { method: 'POST', body: { scope: 'next' } }),
      201,
    );
    const paid = endToEndId();
    await json(
      notify(
        JSON.stringify({
          pix: [
            {
              endToEndId: paid,
              txid: charge.txid,
              valor: valor(charge.amount),
              horario: new Date().toISOString(),
            },
          ],
        }),
      ),
    );
    await eventually(
      async () =>
        (await transactionsOf(loan.id)).some((t) => t.reference === paid) ? true : undefined,
      'the Pix booked',
    );
    const returned = (await stack.psp!.control('POST', `/payouts/${payout.psp_payout_id}/return`, {
      reason: 'AC06',
    })) as { body: { notified: unknown } };
    expect(returned.body.notified).toBe(200);
    const cancelled = await until(loan.id, 'cancelled');
    expect(cancelled).toMatchObject({
      cancellation_reason: 'payout_returned',
      refund_due_amount: charge.amount,
    });
    const transactions = await transactionsOf(loan.id);
    expect(transactions.map((t) => t.type)).toEqual(['disbursement', 'payment', 'payout_returned']);
    const reversal = transactions[2]!;
    expect(reversal.amount).toBe(loan.requested_amount);
    expect(reversal.entries).toEqual(
      expect.arrayContaining([
        { account: 'disbursement_clearing', direction: 'debit', amount: loan.requested_amount },
        { account: 'refunds_payable', direction: 'credit', amount: charge.amount },
      ]),
    );
    const accounts = await ops<{ accounts: { account: string; balance: number }[] }>(
      `/ops/v1/loans/${loan.id}/ledger`,
    );
    const balance = (account: string) =>
      accounts.accounts.find((a) => a.account === account)?.balance ?? 0;
    // Nothing owed either way but the payment, due back; the IOF and interest reversed.
    expect(balance('loan_principal')).toBe(0);
    expect(balance('iof_payable')).toBe(0);
    expect(balance('interest_income')).toBe(0);
    expect(balance('disbursement_clearing')).toBe(0);
    expect(balance('refunds_payable')).toBe(-charge.amount);
    expect(await payoutOf(loan.id)).toMatchObject({ status: 'returned' });
    expect(await eventsOf(loan.id, 'loan.cancelled')).toHaveLength(1);
    expect(await eventsOf(loan.id, 'loan.refund_due')).toHaveLength(1);
    // Told again, the return changes nothing.
    await stack.psp!.control('POST', `/payouts/${payout.psp_payout_id}/notify`);
    expect((await transactionsOf(loan.id)).map((t) => t.type)).toEqual([
      'disbursement',
      'payment',
      'payout_returned',
    ]);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    await recordHistory(
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'payout-confirmed-paid-then-returned',
    );
  });

  it('a payout the PSP fails ends the loan in error (disbursement_failed), nothing booked', async () => {
    // The account's next payouts fail, until this one has.
    await policy('failed', 'AC03');
    let loan: LoanBody;
    let failed: LoanBody;
    try {
      loan = await claimed();
      failed = await until(loan.id, 'error');
    } finally {
      await policy('confirmed');
    }
    expect(failed).toMatchObject({
      disbursement_status: 'failed',
      error: { code: 'disbursement_failed', message: expect.stringContaining('AC03') as unknown },
    });
    expect(await payoutOf(loan.id)).toMatchObject({ status: 'failed', failure_reason: 'AC03' });
    expect(await transactionsOf(loan.id)).toEqual([]);
    expect(await eventsOf(loan.id, 'loan.error')).toHaveLength(1);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    await recordHistory(
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'payout-failed',
    );
  });

  it('pending at the PSP, ops cannot report it by hand; confirmed with its notification lost, the loan asks the PSP and is active', async () => {
    // The account's next payouts stay pending, until this one is sent.
    await policy('pending');
    let loan: LoanBody;
    let pending: PayoutView;
    try {
      loan = await claimed();
      pending = await eventually(async () => {
        const payout = await payoutOf(loan.id);
        return payout?.status === 'pending' ? payout : undefined;
      }, 'the payout pending');
    } finally {
      await policy('confirmed');
    }
    const byHand = await opsPost(`/loans/${loan.id}/disbursement`, { outcome: 'confirmed' });
    expect(byHand.status).toBe(409);
    expect(await byHand.json()).toMatchObject({ code: 'invalid_state' });
    expect((await opsPost(`/loans/${loan.id}/disbursement`, { outcome: 'failed' })).status).toBe(
      409,
    );
    expect((await loanNow(loan.id)).status).toBe('processing');

    const settled = (await stack.psp!.control('POST', `/payouts/${pending.psp_payout_id}/confirm`, {
      notify: false,
    })) as { body: { notified: unknown } };
    expect(settled.body.notified).toBe('dropped');
    await until(loan.id, 'active');
    expect(await payoutOf(loan.id)).toMatchObject({ status: 'confirmed' });
    expect((await simulatedPayouts()).filter((p) => p.idempotencyKey === pending.id)).toHaveLength(
      1,
    );
    expect((await transactionsOf(loan.id)).map((t) => t.type)).toEqual(['disbursement']);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    await recordHistory(
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'payout-pending-confirmed-by-poll',
    );
  });
});
