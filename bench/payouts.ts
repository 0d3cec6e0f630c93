/**
 * `npm run bench:payouts`: payouts per second through the PSP simulator (contract §16), as the
 * loan workflow's activity sends them — `PspClient.sendPayout` over mutual TLS with its OAuth2
 * token, each under a key of its own, the simulator checking request and answer against the payout
 * port's document, writing its state and notifying the outcome (signed) to a receiver on loopback
 * that checks the signature — beside a baseline in the same run: reads of one payout
 * (`GET /payouts/{id}`), the port's cheapest authenticated call over the same client and TLS.
 *
 * BENCH_PAYOUTS (default 2,000) of each, by BENCH_CONCURRENCY (default 8) callers at once, in
 * rounds of 100 that alternate which kind goes first, so machine noise hits both alike; a warm-up
 * of 50 of each first. Then the same key sent again (a retry after a lost answer) for 200 calls:
 * one payout, however often. The simulator keeps its state in one JSON file rewritten whole after
 * each change (docs/decisions.md, "The PSP boundary"), so a payout costs more as the file grows:
 * the file's size at the end is printed. Everything listens and connects on the loopback only.
 */
import { createServer } from 'node:http';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { verifyPspSignature } from '../src/domain/pix/psp-signature.js';
import { makePki } from '../src/devstack/pki.js';
import { startPspSimulator } from '../src/devstack/psp-simulator/index.js';
import { PspClient } from '../src/psp/client.js';
import { log as benchLog } from './support.js';

const total = Number(process.env.BENCH_PAYOUTS ?? 2_000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const ROUND = 100;
const WARMUP = 50;
const log = (line: string) => benchLog(`payouts: ${line}`);

const scratch = mkdtempSync(join(tmpdir(), 'bench-payouts-'));
const secret = 'bench-payout-notification-secret-0123456789';
let notified = 0;
let badlySigned = 0;
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const raw = Buffer.concat(chunks);
    const header = request.headers['pix-signature'];
    const ok = verifyPspSignature(
      typeof header === 'string' ? header : undefined,
      secret,
      raw,
      Date.now(),
    ).ok;
    if (ok) notified += (JSON.parse(raw.toString('utf8')) as { payouts: unknown[] }).payouts.length;
    else badlySigned += 1;
    response.writeHead(ok ? 200 : 401).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverPort = (receiver.address() as { port: number }).port;

const pki = makePki(join(scratch, 'pki'));
const client = { id: 'bench', secret: 'bench-psp-client-secret-0123456789abcdef' };
const stateFile = join(scratch, 'psp', 'state.json');
const simulator = await startPspSimulator({
  port: 0,
  stateFile,
  tlsFiles: { cert: pki.server.certFile, key: pki.server.keyFile, ca: pki.ca.certFile },
  client,
  receiver: {
    pixKey: '11222333000181',
    name: 'Embedded Credit Bench SCD S.A.',
    cnpj: '11444777000161',
    city: 'SAO PAULO',
    uf: 'SP',
    cep: '01310100',
    logradouro: 'Avenida Paulista, 1000',
  },
  notifyPayouts: { url: `http://127.0.0.1:${receiverPort}/psp/v1/payouts`, secret },
});
const psp = new PspClient({
  apiUrl: simulator.url,
  clientId: client.id,
  clientSecret: client.secret,
  tls: { cert: pki.client.cert, key: pki.client.key, ca: pki.ca.cert },
});

const payout = () => ({
  amount: 150_000,
  beneficiary: { pixKey: '52998224725' },
  description: 'Loan bench',
});
const newKey = () => `pyt_${randomBytes(16).toString('hex')}`;

interface Stats {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}
function stats(values: readonly number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { n: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) };
}
const ms = (value: number) => value.toFixed(1).padStart(7);
const line = (title: string, s: Stats, seconds: number) =>
  `${title.padEnd(44)} n=${String(s.n).padStart(5)}  ${(s.n / seconds).toFixed(1).padStart(7)}/s  p50 ${ms(s.p50)} ms  p90 ${ms(s.p90)} ms  p99 ${ms(s.p99)} ms  max ${ms(s.max)} ms`;

/** `count` calls of `call`, `concurrency` at a time: each call's latency, and the busy seconds. */
async function batch(count: number, call: () => Promise<unknown>) {
  const latencies: number[] = [];
  let next = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next++ < count) {
        const start = performance.now();
        await call();
        latencies.push(performance.now() - start);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - began) / 1000 };
}

const results: string[] = [];
try {
  const read = await psp.sendPayout(newKey(), payout());
  const send = () => psp.sendPayout(newKey(), payout());
  const get = () => psp.getPayout(read.id);
  log(`warm-up: ${WARMUP} of each…`);
  await batch(WARMUP, send);
  await batch(WARMUP, get);

  log(`${total} payouts and ${total} reads, ${concurrency} at a time, alternating by ${ROUND}…`);
  const sent = { latencies: [] as number[], seconds: 0 };
  const reads = { latencies: [] as number[], seconds: 0 };
  for (let round = 0; round * ROUND < total; round++) {
    const count = Math.min(ROUND, total - round * ROUND);
    const kinds = round % 2 === 0 ? ([sent, reads] as const) : ([reads, sent] as const);
    for (const into of kinds) {
      const outcome = await batch(count, into === sent ? send : get);
      into.latencies.push(...outcome.latencies);
      into.seconds += outcome.seconds;
    }
  }
  // A retry after a lost answer: the same key, the same payout back.
  const key = newKey();
  const first = await psp.sendPayout(key, payout());
  const retried = await batch(200, () => psp.sendPayout(key, payout()));
  const again = await psp.sendPayout(key, payout());
  if (again.id !== first.id) throw new Error('the same key made a second payout');

  // Notifications go after each answer: let the last ones land.
  const expected = 1 + WARMUP + total + 1;
  for (let i = 0; i < 100 && notified < expected; i++)
    await new Promise((resolve) => setTimeout(resolve, 50));

  const payouts = stats(sent.latencies);
  const baseline = stats(reads.latencies);
  results.push(
    `payouts through the PSP simulator (${concurrency} callers, mutual TLS, OAuth2 token cached; ${total} of each kind, alternating):`,
    line('POST /payouts (a new key each: one payout)', payouts, sent.seconds),
    line('baseline: GET /payouts/{id} (one payout)', baseline, reads.seconds),
    line('POST /payouts again under one key (retries)', stats(retried.latencies), retried.seconds),
    `ratio payouts / baseline: throughput ${(payouts.n / sent.seconds / (baseline.n / reads.seconds)).toFixed(2)}, p50 ${(payouts.p50 / baseline.p50).toFixed(2)}, p99 ${(payouts.p99 / baseline.p99).toFixed(2)}`,
    `outcomes notified and their signatures checked: ${notified} of ${expected} payouts (${badlySigned} refused); the simulator's state file at the end: ${(statSync(stateFile).size / 1e6).toFixed(1)} MB`,
  );
} finally {
  psp.close();
  await simulator.stop();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
}
console.log('');
for (const text of results) console.log(text);
