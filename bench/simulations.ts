/**
 * `npm run bench:simulations`: what a simulation costs.
 *
 * 1. The pure money math (`simulateLoan`: Price on calendar days, financed IOF, the CET solver) for
 *    12, 60 and 360 installments, in this process.
 * 2. Over HTTP, against the production build of the API (`npm run build`, `NODE_ENV=production`,
 *    rate limits lifted) in a process of its own on its own PostgreSQL and Temporal server:
 *    `POST /v3/credit-offers/{id}/simulations` beside `GET /v3/customers/{id}` (an indexed read
 *    behind the same auth, rate limit, validation and logging) in the same run, with autocannon.
 *    The ratio of the two is the figure to watch; absolute rates move with the machine.
 * 3. What simulations of 360 installments (a production customer ops approved for 30 years) do to
 *    the reads beside them: the read alone at BENCH_READ_CONNECTIONS (default 10), then the same
 *    read while BENCH_LONG_CONNECTIONS (default 4) clients simulate 360 installments back to back.
 *    The reads' p99 beside them must stay ≤ 25 ms (issue 25).
 *
 * BENCH_SECONDS (default 10) and BENCH_CONNECTIONS (default 50) size the HTTP runs;
 * BENCH_SKIP_BUILD=1 reuses `dist/`; BENCH_PROFILE=dir writes a CPU profile of the API process
 * into dir.
 */
import autocannon from 'autocannon';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createPartner } from '../src/commands/create-partner.js';
import { loadConfig } from '../src/config.js';
import { heapFlags } from '../src/main/node-flags.js';
import { startMailpit } from '../src/devstack/mailpit.js';
import { createDatabase } from '../src/db/client.js';
import { addDays, businessDate } from '../src/domain/business-date.js';
import { simulateLoan } from '../src/domain/credit/simulation.js';
import { activeCustomer, offerOf } from '../test/helpers/credit.js';
import { client, tokenFor } from '../test/helpers/partners.js';
import type { TestStack } from '../test/helpers/stack.js';
import {
  buildUnlessSkipped,
  cpuProfileFlags,
  log,
  productionEnv,
  startBenchStack,
  waitForReady,
} from './support.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** Phase 3: the reads' clients, and the clients simulating 360 installments beside them. */
const READ_CONNECTIONS = Number(process.env.BENCH_READ_CONNECTIONS ?? 10);
const LONG_CONNECTIONS = Number(process.env.BENCH_LONG_CONNECTIONS ?? 4);

// 1. The math alone.
const { iof } = loadConfig({
  NODE_ENV: 'test',
  DATABASE_URL: 'postgres://unused',
  S3_BUCKET: 'unused',
});
const today = businessDate(new Date());
const math: string[] = [];
for (const installments of [12, 60, 360]) {
  const input = {
    requestedAmount: 1_000_000,
    installments,
    monthlyInterestRate: '0.0199',
    releaseDate: today,
    firstDueDate: addDays(today, 30),
    borrower: 'individual' as const,
    iof,
  };
  for (let i = 0; i < 20; i++) simulateLoan(input); // warm up
  const runs = installments === 360 ? 200 : 1_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) simulateLoan(input);
  const perRun = Number(process.hrtime.bigint() - started) / runs / 1e6;
  math.push(`  ${String(installments).padStart(3)} installments: ${perRun.toFixed(3)} ms each`);
}
log('pure math (simulateLoan, R$ 10,000 at 1.99 % a month):');
for (const line of math) console.log(line);

// 2. Over HTTP.
buildUnlessSkipped();
Runtime.install({ logger: new DefaultLogger('WARN') });
const bench = await startBenchStack({
  name: 'simulations',
  postgresPort: 5498,
  temporalPort: 7298,
});
// Customers prove themselves by codes e-mailed to them; test/helpers/mailbox.ts reads them here.
const mail = await startMailpit();
process.env.MAILPIT_API_URL = mail.apiUrl;
const port = 3998;
const baseUrl = `http://127.0.0.1:${port}`;

try {
  // The production build, as `npm run bench:api` runs it.
  const env = productionEnv(bench, { PORT: String(port), ...mail.env });
  const profile = cpuProfileFlags();
  bench.spawn('dist/src/main/worker.js', env, [...heapFlags]);
  bench.spawn('dist/src/main/api.js', env, [...heapFlags, ...profile]);
  await waitForReady(`${baseUrl}/readyz`);

  const database = createDatabase(bench.databaseUrl, { max: 2 });
  const partner = await createPartner(database.db, { name: 'Bench' });
  await database.close();
  const stack = { baseUrl } as TestStack; // the helpers only need the address
  const token = await tokenFor(stack, partner.credentials.sandbox);
  const api = client(stack, token);
  const customer = await activeCustomer(stack, api);
  const offer = await offerOf(api, customer.id);
  log(`customer ${customer.id} active; offer ${offer.id} at ${offer.monthly_interest_rate}/month`);

  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  // R$ 5,000 (every sandbox offer allows it) over 12 months.
  const simulation = JSON.stringify({ amount: 500_000, installments: 12 });
  const load = (
    title: string,
    { path, ...options }: { path: string } & Partial<autocannon.Options>,
  ) =>
    autocannon({
      url: `${baseUrl}${path}`,
      connections: CONNECTIONS,
      duration: SECONDS,
      headers,
      ...options,
      title,
    });
  log(`warming up, then ${SECONDS} s each at ${CONNECTIONS} connections…`);
  await load('warm-up', { duration: 2, path: `/v3/customers/${customer.id}` });
  await load('warm-up', {
    duration: 2,
    method: 'POST',
    path: `/v3/credit-offers/${offer.id}/simulations`,
    body: simulation,
  });
  const read = await load('GET /v3/customers/{id}', { path: `/v3/customers/${customer.id}` });
  const simulate = await load('POST /v3/credit-offers/{id}/simulations (12 installments)', {
    method: 'POST',
    path: `/v3/credit-offers/${offer.id}/simulations`,
    body: simulation,
  });

  const row = (result: autocannon.Result, expected: number) => {
    const bad = result.non2xx + result.errors + result.timeouts;
    const status = bad > 0 ? `  (${bad} not ${expected})` : '';
    return `${result.title!.padEnd(58)} ${result.requests.average.toFixed(0).padStart(6)} req/s   p50 ${String(result.latency.p50).padStart(4)} ms   p99 ${String(result.latency.p99).padStart(4)} ms${status}`;
  };
  console.log('');
  console.log(row(read, 200));
  console.log(row(simulate, 201));
  console.log(
    `${'simulations / reads'.padEnd(58)} ${(simulate.requests.average / read.requests.average).toFixed(2).padStart(6)}`,
  );

  // 3. What 30-year simulations do to the reads beside them: a production customer ops approved
  //    for 360 installments, reads at a steady READ_CONNECTIONS alone, then with
  //    LONG_CONNECTIONS clients simulating 360 installments back to back.
  const production = client(stack, await tokenFor(stack, partner.credentials.production));
  const longCustomer = await activeCustomer(stack, production, {}, undefined, env.OPS_TOKEN, 360);
  const longOffer = await offerOf(production, longCustomer.id);
  const productionHeaders = {
    authorization: `Bearer ${await tokenFor(stack, partner.credentials.production)}`,
    'content-type': 'application/json',
  };
  const readLong = (title: string) =>
    load(title, {
      path: `/v3/customers/${longCustomer.id}`,
      connections: READ_CONNECTIONS,
      headers: productionHeaders,
    });
  const simulateLong = () =>
    load('POST …/simulations (360 installments), beside the reads', {
      method: 'POST',
      path: `/v3/credit-offers/${longOffer.id}/simulations`,
      body: JSON.stringify({ amount: 500_000, installments: 360 }),
      connections: LONG_CONNECTIONS,
      headers: productionHeaders,
    });
  log(
    `reads (${READ_CONNECTIONS} connections) alone, then beside ${LONG_CONNECTIONS} clients simulating 360 installments…`,
  );
  await simulateLong(); // warm-up of the long path
  const alone = await readLong(`GET /v3/customers/{id} alone (${READ_CONNECTIONS} connections)`);
  const [beside, long] = await Promise.all([
    readLong(`GET /v3/customers/{id} beside 360-installment simulations`),
    simulateLong(),
  ]);
  console.log('');
  console.log(row(alone, 200));
  console.log(row(beside, 200));
  console.log(row(long, 201));
  console.log(
    `${'reads p99 beside / alone'.padEnd(58)} ${(beside.latency.p99 / Math.max(1, alone.latency.p99)).toFixed(2).padStart(6)}   (target: p99 ≤ 25 ms beside)`,
  );
} finally {
  await mail.stop();
  await bench.stop();
}
