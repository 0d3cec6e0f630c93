import { createServer, type Server } from 'node:http';
import { request } from 'node:https';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startPspSimulator,
  type PspSimulator,
  type SimulatorProcessOptions,
} from '../../src/devstack/psp-simulator/index.js';
import { verifyPspSignature } from '../../src/domain/pix/psp-signature.js';
import { PspClient } from '../../src/psp/client.js';
import { PspError } from '../../src/psp/errors.js';
import { eventually } from '../helpers/eventually.js';
import { makeTestPki, type TestPki } from '../helpers/test-pki.js';

/**
 * The PSP boundary (contract §16): the service's PSP client against the PSP simulator, a process
 * of its own that checks every request and answer against Banco Central's API Pix document and
 * the payout port's. One simulator for the file; each test uses txids and keys of its own.
 */
const LENDER_KEY = '11222333000181';
const WEBHOOK_SECRET = 'psp-boundary-webhook-secret-0123456789';
const txid = () =>
  `tx${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`.padEnd(30, '0').slice(0, 35);

let pki: TestPki;
let simulator: PspSimulator;
let options: SimulatorProcessOptions;
let client: PspClient;
let receiver: Server;
const notifications: { path: string; body: string; signature: string | undefined }[] = [];
/** The payout outcomes notified for `id`, their signatures checked. */
const payoutNotifications = (id: string) =>
  notifications
    .filter((n) => n.path === '/psp/v1/payouts' && n.body.includes(id))
    .map((n) => {
      expect(
        verifyPspSignature(n.signature, WEBHOOK_SECRET, Buffer.from(n.body), Date.now()),
      ).toEqual({ ok: true });
      return (JSON.parse(n.body) as { payouts: { id: string; status: string }[] }).payouts;
    });

beforeAll(async () => {
  pki = makeTestPki();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      notifications.push({
        path: req.url ?? '',
        body: Buffer.concat(chunks).toString(),
        signature: req.headers['pix-signature'] as string | undefined,
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  options = {
    port: 0,
    stateFile: join(mkdtempSync(join(tmpdir(), 'psp-simulator-')), 'state.json'),
    tlsFiles: { cert: pki.server.certFile, key: pki.server.keyFile, ca: pki.ca.certFile },
    client: { id: 'embedded-credit', secret: 'psp-client-secret-0123456789' },
    receiver: {
      pixKey: LENDER_KEY,
      name: 'Embedded Credit SCD S.A.',
      cnpj: '11222333000181',
      city: 'SAO PAULO',
      uf: 'SP',
      cep: '01310100',
      logradouro: 'Avenida Paulista, 1000',
    },
    notify: {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/psp/v1/pix`,
      secret: WEBHOOK_SECRET,
    },
    notifyPayouts: {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/psp/v1/payouts`,
      secret: WEBHOOK_SECRET,
    },
  };
  simulator = await startPspSimulator(options);
  client = clientFor(simulator.url);
});

afterAll(async () => {
  client?.close();
  await simulator?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

const clientFor = (apiUrl: string, identity: { cert: string; key: string } = pki.client) =>
  new PspClient({
    apiUrl,
    clientId: options.client.id,
    clientSecret: options.client.secret,
    tls: { cert: identity.cert, key: identity.key, ca: pki.ca.cert },
  });

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the PSP to refuse');
    },
    (error: unknown) => {
      if (!(error instanceof PspError)) throw error;
      return error;
    },
  );

/** A raw HTTPS call (no client certificate unless given), for what the client would never send. */
function raw(
  path: string,
  init: { method: string; body?: string; headers?: Record<string, string> },
) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const call = request(
      new URL(path, simulator.url),
      { method: init.method, ca: pki.ca.cert, headers: init.headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    call.on('error', reject);
    call.end(init.body);
  });
}

const cob = (valor: string, expiracao = 3600) => ({
  calendario: { expiracao },
  devedor: { cpf: '12345678909', nome: 'Francisco da Silva' },
  valor: { original: valor },
  chave: LENDER_KEY,
  solicitacaoPagador: 'Parcela do empréstimo',
});

describe('PSP boundary: the client against the simulator', () => {
  it('authenticates by client credentials over mutual TLS, and nothing answers without our certificate', async () => {
    const created = await client.createCob(txid(), cob('10.00'));
    expect(created.status).toBe('ATIVA');

    const token = await raw('/oauth/token', {
      method: 'POST',
      body: 'grant_type=client_credentials',
      headers: {
        authorization: `Basic ${Buffer.from(`${options.client.id}:${options.client.secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    expect(token.status).toBe(401);
    expect(JSON.parse(token.body)).toMatchObject({ error: 'invalid_client' });

    const stranger = clientFor(simulator.url, pki.stranger);
    try {
      const refused = await failure(stranger.getCob(created.txid));
      expect(refused).toMatchObject({ code: 'unauthorized', retryable: false });
    } finally {
      stranger.close();
    }
    const wrongSecret = new PspClient({
      apiUrl: simulator.url,
      clientId: options.client.id,
      clientSecret: 'not-the-secret',
      tls: { cert: pki.client.cert, key: pki.client.key, ca: pki.ca.cert },
    });
    try {
      expect(await failure(wrongSecret.getCob(created.txid))).toMatchObject({
        code: 'unauthorized',
      });
    } finally {
      wrongSecret.close();
    }
    // A token, but no certificate: still refused.
    expect((await raw(`/cob/${created.txid}`, { method: 'GET' })).status).toBe(403);
  });

  it('creates a cobv with the loan’s multa and juros and reads it back as the PSP keeps it', async () => {
    const id = txid();
    const due = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    const created = await client.createCobv(id, {
      calendario: { dataDeVencimento: due, validadeAposVencimento: 30 },
      devedor: { cpf: '12345678909', nome: 'Francisco da Silva' },
      valor: {
        original: '123.45',
        multa: { modalidade: 2, valorPerc: '2.00' },
        juros: { modalidade: 3, valorPerc: '1.00' },
      },
      chave: LENDER_KEY,
    });
    expect(created).toMatchObject({ txid: id, status: 'ATIVA', revisao: 0 });
    expect(created.pixCopiaECola).toMatch(/^000201.*6304[0-9A-F]{4}$/);

    const read = await client.getCobv(id);
    expect(read).toMatchObject({
      calendario: { dataDeVencimento: due, validadeAposVencimento: 30 },
      valor: {
        original: '123.45',
        multa: { modalidade: 2, valorPerc: '2.00' },
        juros: { modalidade: 3, valorPerc: '1.00' },
      },
      recebedor: { cnpj: '11222333000181' },
      pixCopiaECola: created.pixCopiaECola,
    });
  });

  it('refuses to take a Pix for an expired or a cancelled charge; a paid one is notified, signed, and listed', async () => {
    const expiring = txid();
    await client.createCob(expiring, cob('50.00', 60));
    const cancelled = txid();
    await client.createCob(cancelled, cob('60.00'));
    const paid = txid();
    await client.createCob(paid, cob('70.00'));
    const alsoPaid = txid();
    await client.createCob(alsoPaid, cob('71.00'));

    expect(await client.cancelCharge('cob', cancelled)).toMatchObject({
      status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR',
      revisao: 1,
    });
    const before = new Date(Date.now() - 1000);
    const settled = await simulator.control('POST', `/charges/${paid}/pay`);
    expect(settled).toMatchObject({
      status: 201,
      body: { notified: 200, pix: { txid: paid, valor: '70.00' } },
    });
    const notification = notifications.find((n) => n.body.includes(paid));
    expect(notification).toBeDefined();
    expect(
      verifyPspSignature(
        notification?.signature,
        WEBHOOK_SECRET,
        Buffer.from(notification?.body ?? ''),
        Date.now(),
      ),
    ).toEqual({ ok: true });

    expect(
      await simulator.control('POST', `/charges/${alsoPaid}/pay`, { notify: false }),
    ).toMatchObject({
      status: 201,
      body: { notified: 'dropped' },
    });
    expect(notifications.some((n) => n.body.includes(alsoPaid))).toBe(false);
    await simulator.control('POST', '/clock', { advanceSeconds: 61 });
    expect((await simulator.control('POST', `/charges/${expiring}/pay`)).status).toBe(409);
    expect((await simulator.control('POST', `/charges/${cancelled}/pay`)).status).toBe(409);
    expect((await simulator.control('POST', `/charges/${paid}/pay`)).status).toBe(409);

    const received = await client.listPix(before, new Date(Date.now() + 3_600_000));
    // Page by page, the same Pix: nothing lost or repeated at a page's edge.
    const paged = await client.listPix(before, new Date(Date.now() + 3_600_000), 1);
    expect(paged.map((pix) => pix.endToEndId)).toEqual(received.map((pix) => pix.endToEndId));
    expect(
      received.filter((pix) => [expiring, cancelled, paid, alsoPaid].includes(pix.txid ?? '')),
    ).toEqual([
      expect.objectContaining({ txid: paid, valor: '70.00' }),
      expect.objectContaining({ txid: alsoPaid, valor: '71.00' }),
    ]);
    expect(await client.getCob(paid)).toMatchObject({
      status: 'CONCLUIDA',
      pix: [expect.objectContaining({ valor: '70.00' })],
    });
  });

  it('sends one payout however often a key is sent, and refuses the key with another request', async () => {
    const key = `claim_${txid()}`;
    const payout = {
      amount: 150_000,
      beneficiary: { pixKey: '12345678909' },
      description: 'Loan disbursement',
    };
    const sent = await Promise.all([
      client.sendPayout(key, payout),
      client.sendPayout(key, payout),
    ]);
    const again = await client.sendPayout(key, payout);
    expect(new Set([...sent, again].map((p) => p.id)).size).toBe(1);
    expect(again).toMatchObject({ status: 'confirmed', amount: 150_000, idempotencyKey: key });
    expect(again.endToEndId).toMatch(/^E[0-9A-Za-z]{31}$/);
    const state = JSON.parse(readFileSync(options.stateFile, 'utf8')) as {
      payouts: Record<string, { idempotencyKey: string }>;
    };
    expect(Object.values(state.payouts).filter((p) => p.idempotencyKey === key)).toHaveLength(1);
    // Its outcome is notified once, after the first answer.
    await eventually(
      async () => (payoutNotifications(again.id).length > 0 ? true : undefined),
      'the payout notification',
    );
    expect(payoutNotifications(again.id)).toEqual([
      [expect.objectContaining({ id: again.id, status: 'confirmed' })],
    ]);

    expect(await failure(client.sendPayout(key, { ...payout, amount: 150_001 }))).toMatchObject({
      code: 'conflict',
      status: 409,
      retryable: false,
    });
  });

  it('keeps payouts and charges across a restart of the simulator, the client fetching a new token once', async () => {
    await simulator.control('PUT', '/payouts/policy', { outcome: 'pending' });
    const pending = await client.sendPayout(`claim_${txid()}`, {
      amount: 9_900,
      beneficiary: { pixKey: 'borrower@example.com' },
    });
    expect(pending.status).toBe('pending');
    const charge = txid();
    await client.createCob(charge, cob('12.34'));

    await simulator.stop();
    simulator = await startPspSimulator({ ...options, port: Number(new URL(simulator.url).port) });

    // The restarted simulator forgot its tokens: the client's answers 401, it gets a new one.
    expect(await client.getPayout(pending.id)).toMatchObject({ id: pending.id, status: 'pending' });
    expect(payoutNotifications(pending.id)).toEqual([]);
    expect(
      await simulator.control('POST', `/payouts/${pending.id}/fail`, { reason: 'AC03' }),
    ).toMatchObject({ status: 200, body: { notified: 200 } });
    // The PSP notifies the outcome again (a duplicate): the same failed payout, twice.
    await simulator.control('POST', `/payouts/${pending.id}/notify`);
    expect(payoutNotifications(pending.id)).toEqual(
      Array(2).fill([
        expect.objectContaining({ id: pending.id, status: 'failed', failureReason: 'AC03' }),
      ]),
    );
    expect(await client.getPayout(pending.id)).toMatchObject({
      status: 'failed',
      failureReason: 'AC03',
    });
    expect(await client.getCob(charge)).toMatchObject({
      status: 'ATIVA',
      valor: { original: '12.34' },
    });
    await simulator.control('PUT', '/payouts/policy', { outcome: 'confirmed' });
  });

  it('returns a Pix by devolucao; one the SPI refuses is NAO_REALIZADO; the id is asked for once', async () => {
    const charge = txid();
    await client.createCob(charge, cob('80.00'));
    const paid = (await simulator.control('POST', `/charges/${charge}/pay`, { notify: false })) as {
      body: { pix: { endToEndId: string } };
    };
    const e2eid = paid.body.pix.endToEndId;

    const asked = await client.requestDevolucao(e2eid, 'dev1', { valor: '30.00' });
    expect(asked).toMatchObject({ id: 'dev1', valor: '30.00', status: 'EM_PROCESSAMENTO' });
    // A retry after a lost answer gets the same devolucao, not a second one.
    expect(await client.requestDevolucao(e2eid, 'dev1', { valor: '30.00' })).toMatchObject({
      rtrId: asked.rtrId,
    });
    expect(await failure(client.requestDevolucao(e2eid, 'dev2', { valor: '50.01' }))).toMatchObject(
      { code: 'rejected', status: 400 },
    );

    const outcome = await simulator.control('POST', `/pix/${e2eid}/devolucao/dev1/outcome`, {
      status: 'NAO_REALIZADO',
      motivo: 'Conta encerrada',
    });
    expect(outcome).toMatchObject({ status: 200, body: { notified: 200 } });
    expect(await client.getDevolucao(e2eid, 'dev1')).toMatchObject({
      status: 'NAO_REALIZADO',
      motivo: 'Conta encerrada',
    });
    // The final status is notified with its Pix (the API Pix's callback), signed as a payment is.
    const notified = notifications
      .filter((n) => n.body.includes(e2eid))
      .map((n) => JSON.parse(n.body) as { pix: { devolucoes?: { status: string }[] }[] });
    expect(notified).toEqual([
      {
        pix: [
          expect.objectContaining({
            devolucoes: [expect.objectContaining({ id: 'dev1', status: 'NAO_REALIZADO' })],
          }),
        ],
      },
    ]);
  });

  it('answers 400 in the API Pix’s problem shape to a request its document forbids', async () => {
    const refused = await failure(
      client.createCob(txid(), { ...cob('10.00'), valor: { original: '10' } }),
    );
    expect(refused).toMatchObject({ code: 'rejected', status: 400, retryable: false });
    expect(refused.problem).toMatchObject({
      type: 'https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida',
      status: 400,
      violacoes: [expect.objectContaining({ propriedade: 'requestBody.valor.original' })],
    });
    // A cobv without its devedor (the document requires one), and a txid too short for the document.
    const noDevedor = await failure(
      client.createCobv(txid(), {
        calendario: { dataDeVencimento: '2099-01-01' },
        valor: { original: '1.00' },
        chave: LENDER_KEY,
      } as never),
    );
    expect(noDevedor.problem?.type).toMatch(/CobVOperacaoInvalida$/);
    expect((await failure(client.getCob('short'))).status).toBe(400);
    // A payout without an idempotency key: the port's document requires it.
    const noKey = await failure(client.sendPayout('', { amount: 1, beneficiary: { pixKey: 'x' } }));
    expect(noKey).toMatchObject({ status: 400 });
  });
});
