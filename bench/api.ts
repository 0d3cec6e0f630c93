/**
 * `npm run bench:api`: the API's request path beside what its parts can do alone, in one run.
 *
 * On a PostgreSQL and a Temporal dev server of its own (SQLite on disk, as `npm run dev` runs it),
 * it builds the project (`npm run build`) and runs the production API and worker from `dist/`
 * (`NODE_ENV=production`, rate limits lifted, logs at their default level, to /dev/null), then, with autocannon:
 *
 * - `GET /v3/customers/{id}` at 50 connections beside a bare Koa + postgres.js handler of the same
 *   query on the same database (bench/bare-server.ts);
 * - `POST /v3/customers` at 20 connections (a new cpf per request) beside the raw start rate of the
 *   same workflow on the same server: the onboarding workflows of customers written straight to
 *   the database, started by a Temporal client at the same concurrency, so the server and the
 *   worker do the same work per customer and only the API's part is missing;
 * - the peak RSS (VmHWM) of the API and the worker after both loads.
 *
 * Each side runs twice, alternating, and the better run counts. BENCH_SECONDS (default 10) sizes
 * the runs; BENCH_SKIP_BUILD=1 reuses `dist/`; BENCH_PROFILE=dir writes a CPU profile of the API;
 * BENCH_NODE_FLAGS adds node/V8 flags to the API and the worker after their own heap flags
 * (src/main/node-flags.ts; a later flag wins: experiments); BENCH_MEMORY_DETAIL=1 prints the heap
 * figures of the API and the worker after the loads; BENCH_READS_ONLY=1 stops after the reads (for
 * trying a change to the read path). Besides each process's peak, it prints the
 * peak of each phase (reads, writes), the bare server's too.
 */
import autocannon from 'autocannon';
import { WorkflowIdReusePolicy } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createPartner } from '../src/commands/create-partner.js';
import { createDatabase } from '../src/db/client.js';
import { insertCustomer, type Customer } from '../src/db/queries/customers.js';
import { initialKyc } from '../src/domain/customers/kyc.js';
import { newId } from '../src/domain/ids.js';
import { heapFlags } from '../src/main/node-flags.js';
import { onboardingStart } from '../src/temporal/customer-workflows.js';
import { toTypedSearchAttributes } from '../src/temporal/outbox.js';
import { fakeCpf, registerCustomer } from '../test/helpers/customers.js';
import { client, tokenFor } from '../test/helpers/partners.js';
import type { TestStack } from '../test/helpers/stack.js';
import {
  benchTemporalClient,
  best,
  buildUnlessSkipped,
  cpuProfileFlags,
  formatRate,
  fromAutocannon,
  log,
  peakRssMb,
  productionEnv,
  sampleRss,
  startBenchStack,
  waitForReady,
  type Rate,
} from './support.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const READ_CONNECTIONS = 50;
const WRITE_CONNECTIONS = 20;
const TASK_QUEUE = 'embedded-credit';

buildUnlessSkipped();

Runtime.install({ logger: new DefaultLogger('WARN') });
const stack = await startBenchStack({
  name: 'api',
  postgresPort: 5496,
  temporalPort: 7296,
  temporalFile: true,
});
const apiPort = 3996;
const barePort = 3995;
const apiUrl = `http://127.0.0.1:${apiPort}`;
const bareUrl = `http://127.0.0.1:${barePort}`;

try {
  const database = createDatabase(stack.databaseUrl, { max: 4 });
  const partner = await createPartner(database.db, { name: 'Bench' });
  const base = productionEnv(stack, { TEMPORAL_TASK_QUEUE: TASK_QUEUE });
  const profile = cpuProfileFlags();
  const experiment = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  // The production processes' heap flags, then any experiment's (a later flag wins).
  const worker = stack.spawn('dist/src/main/worker.js', base, [...heapFlags, ...experiment]);
  const api = stack.spawn('dist/src/main/api.js', { ...base, PORT: String(apiPort) }, [
    ...heapFlags,
    ...experiment,
    ...profile,
  ]);
  const bare = stack.spawn(
    'bench/bare-server.ts',
    { ...base, PORT: String(barePort), BARE_PARTNER_ID: partner.partner_id },
    ['--import', 'tsx'],
  );
  await Promise.all([waitForReady(`${apiUrl}/readyz`), waitForReady(`${bareUrl}/readyz`)]);

  const rss = sampleRss({ api: api.pid!, worker: worker.pid!, bare: bare.pid! });
  const token = await tokenFor({ baseUrl: apiUrl } as TestStack, partner.credentials.sandbox);
  const customer = await registerCustomer(client({ baseUrl: apiUrl } as TestStack, token));
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const load = (
    title: string,
    url: string,
    options: Partial<autocannon.Options> & { connections: number },
  ) =>
    autocannon({ url, duration: SECONDS, headers, ...options, title }).then((result) =>
      fromAutocannon(title, result),
    );

  // Reads.
  const readPath = `/v3/customers/${customer.id}`;
  const readApi = () =>
    load('this API: GET /v3/customers/{id}', `${apiUrl}${readPath}`, {
      connections: READ_CONNECTIONS,
    });
  const readBare = () =>
    load('bare Koa + postgres.js, same query', `${bareUrl}${readPath}`, {
      connections: READ_CONNECTIONS,
    });
  log(`reads: ${SECONDS} s runs at ${READ_CONNECTIONS} connections, each side twice…`);
  rss.phase('reads');
  await load('warm-up', `${apiUrl}${readPath}`, { connections: 10, duration: 2 });
  await load('warm-up', `${bareUrl}${readPath}`, { connections: 10, duration: 2 });
  const bareRead1 = await readBare();
  const apiRead1 = await readApi();
  const bareRead = best(bareRead1, await readBare());
  const apiRead = best(apiRead1, await readApi());

  if (process.env.BENCH_READS_ONLY) {
    console.log('');
    for (const rate of [apiRead, bareRead]) console.log(formatRate(rate));
    console.log(`reads:  API / bare ${(apiRead.perSecond / bareRead.perSecond).toFixed(2)}`);
    console.log(`peak RSS: API ${(await peakRssMb(api.pid!)).toFixed(0)} MB`);
    await rss.stop();
    await database.close();
  } else {
    // Writes.
    const registration = () =>
      JSON.stringify({
        cpf: fakeCpf({ notStartingWith9: true }),
        name: 'Maria Silva',
        email: 'maria@example.com',
        phone: '+5511987654321',
      });
    let keys = 0;
    const registerApi = () =>
      load('this API: POST /v3/customers', `${apiUrl}/v3/customers`, {
        connections: WRITE_CONNECTIONS,
        requests: [
          {
            method: 'POST',
            setupRequest: (request) => ({
              ...request,
              headers: { ...request.headers, 'idempotency-key': `bench-${++keys}` },
              body: registration(),
            }),
          },
        ],
      });
    const temporal = await benchTemporalClient(stack.temporalAddress);
    const { connection } = temporal;
    const rawStarts = async (): Promise<Rate> => {
      // Enough customers for the best rate seen so far, three times over.
      const customers = await writeCustomers(database.db, partner.partner_id, SECONDS * 300);
      let next = 0;
      let started = 0;
      let failed = 0;
      const end = Date.now() + SECONDS * 1000;
      const loop = async () => {
        while (Date.now() < end && next < customers.length) {
          const start = onboardingStart(customers[next++]!, TASK_QUEUE, 3_600_000);
          try {
            await temporal.workflow.start(start.workflowType, {
              workflowId: start.workflowId,
              taskQueue: start.taskQueue,
              args: start.args,
              workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
              typedSearchAttributes: toTypedSearchAttributes(start.searchAttributes ?? {}),
              ...(start.summary ? { staticSummary: start.summary } : {}),
            });
            started++;
          } catch {
            failed++;
          }
        }
      };
      const began = Date.now();
      await Promise.all(Array.from({ length: WRITE_CONNECTIONS }, loop));
      return {
        title: 'raw starts of the same workflow, same server',
        perSecond: started / ((Date.now() - began) / 1000),
        bad: failed,
      };
    };
    rss.phase('writes');
    log(`writes: ${SECONDS} s runs at ${WRITE_CONNECTIONS} connections, each side twice…`);
    const rawStart1 = await rawStarts();
    const apiWrite1 = await registerApi();
    const rawStart = best(rawStart1, await rawStarts());
    const apiWrite = best(apiWrite1, await registerApi());
    await connection.close();
    await database.close();

    const [apiRss, workerRss] = await Promise.all([peakRssMb(api.pid!), peakRssMb(worker.pid!)]);
    const phases = await rss.stop();
    if (process.env.BENCH_MEMORY_DETAIL) {
      const sources = { api: `${apiUrl}/metrics`, worker: 'http://127.0.0.1:9464/metrics' };
      for (const [name, url] of Object.entries(sources)) {
        // The API's /metrics is behind the ops guard; the worker's port is loopback-only, open.
        const headers: Record<string, string> =
          name === 'api' ? { authorization: `Bearer ${base.OPS_TOKEN}` } : {};
        const text = await (await fetch(url, { headers })).text();
        for (const line of text.split('\n'))
          if (
            /^(nodejs_heap_size|nodejs_external|process_resident|nodejs_heap_space_size_used)/.test(
              line,
            )
          )
            console.log(`[${name}] ${line}`);
      }
    }
    console.log('');
    console.log('peak RSS by phase (MB; the bare server runs under tsx):');
    for (const [name, byPhase] of phases)
      console.log(
        `  ${name.padEnd(7)} ${[...byPhase].map(([phase, mb]) => `${phase} ${mb.toFixed(0)}`).join('   ')}`,
      );
    const ratio = (a: Rate, b: Rate) => a.perSecond / b.perSecond;
    const mark = (ok: boolean) => (ok ? 'met' : 'NOT MET');
    const readRatio = ratio(apiRead, bareRead);
    const writeRatio = ratio(apiWrite, rawStart);
    console.log('');
    for (const rate of [apiRead, bareRead, apiWrite, rawStart]) console.log(formatRate(rate));
    console.log('');
    console.log(
      `reads:  API / bare ${readRatio.toFixed(2)} (target ≥ 0.6: ${mark(readRatio >= 0.6)}); p99 ${apiRead.p99} ms (target ≤ 25: ${mark(apiRead.p99! <= 25)})`,
    );
    console.log(
      `writes: API / raw starts ${writeRatio.toFixed(2)} (target ≥ 0.7: ${mark(writeRatio >= 0.7)})`,
    );
    console.log(
      `peak RSS: API ${apiRss.toFixed(0)} MB (target ≤ 150: ${mark(apiRss <= 150)}), worker ${workerRss.toFixed(0)} MB (target ≤ 300: ${mark(workerRss <= 300)})`,
    );
  }
} finally {
  await stack.stop();
}

/** Customers as a registration writes them, without their workflows: the raw starts' input. */
async function writeCustomers(
  db: ReturnType<typeof createDatabase>['db'],
  partnerId: string,
  count: number,
): Promise<Customer[]> {
  const rows: Customer[] = [];
  for (let i = 0; i < count; i++) {
    const row = await insertCustomer(db, {
      id: newId('cust'),
      partnerId,
      environment: 'sandbox',
      status: 'pending_kyc',
      cpf: fakeCpf({ notStartingWith9: true }),
      cnpj: null,
      name: 'Maria Silva',
      email: 'maria@example.com',
      phone: '+5511987654321',
      tradingName: null,
      externalId: null,
      kyc: initialKyc(false),
    });
    if (row) rows.push(row);
  }
  return rows;
}
