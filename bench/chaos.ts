/**
 * `npm run bench:chaos`: the dependencies fail in the middle of a registration load (reliability R8).
 *
 * On a PostgreSQL and a Temporal dev server (SQLite on disk) of its own, the production API and
 * worker (`npm run build` unless BENCH_SKIP_BUILD=1) take `POST /v3/customers` from autocannon at
 * 10 connections for 50 s, each request with a new cpf and Idempotency-Key. At 10 s PostgreSQL is
 * stopped for 8 s; at 28 s the Temporal server is stopped for 8 s (its state kept on disk). Then:
 *
 * - every answer is counted by status: a 5xx other than 503 is a failure, a 503 without
 *   `Retry-After` is a failure, a request that got no answer within 20 s (autocannon's timeout, past
 *   the API's own 15 s budget) is a failure;
 * - after each restart the API must answer 201 again by itself (the last 10 s are all 201);
 * - every customer answered 201 or 200 must end with its onboarding workflow running and its
 *   `customer.created` event written exactly once (the outbox sweeper has a minute to start the
 *   workflows of registrations committed while Temporal was down).
 *
 * Exits 1 when anything was lost or answered wrongly.
 */
import autocannon from 'autocannon';
import { WorkflowNotFoundError } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createPartner } from '../src/commands/create-partner.js';
import { createDatabase } from '../src/db/client.js';
import { workflowIds } from '../src/temporal/workflow-ids.js';
import { heapFlags } from '../src/main/node-flags.js';
import { fakeCpf } from '../test/helpers/customers.js';
import { tokenFor } from '../test/helpers/partners.js';
import type { TestStack } from '../test/helpers/stack.js';
import {
  benchTemporalClient,
  buildUnlessSkipped,
  log,
  productionEnv,
  startBenchStack,
  waitForReady,
} from './support.js';

const LOAD_SECONDS = 50;
const CONNECTIONS = 10;
const POSTGRES_DOWN = { atMs: 10_000, forMs: 8_000 };
const TEMPORAL_DOWN = { atMs: 28_000, forMs: 8_000 };
const SETTLED_TAIL_MS = 10_000;

buildUnlessSkipped();

Runtime.install({ logger: new DefaultLogger('ERROR') });
const stack = await startBenchStack({
  name: 'chaos',
  postgresPort: 5494,
  temporalPort: 7294,
  temporalFile: true,
});
const apiPort = 3994;
const apiUrl = `http://127.0.0.1:${apiPort}`;

try {
  const setup = createDatabase(stack.databaseUrl, { max: 2 });
  const partner = await createPartner(setup.db, { name: 'Chaos' });
  await setup.close();
  const env = productionEnv(stack, { LOG_LEVEL: 'error' });
  stack.spawn('dist/src/main/worker.js', env, [...heapFlags]);
  stack.spawn('dist/src/main/api.js', { ...env, PORT: String(apiPort) }, [...heapFlags]);
  await waitForReady(`${apiUrl}/readyz`);
  const token = await tokenFor({ baseUrl: apiUrl } as TestStack, partner.credentials.sandbox);

  const started = Date.now();
  const statuses = new Map<number, number>();
  const created = new Set<string>();
  const lateStatuses = new Map<number, number>();
  let unannouncedRetry = 0;
  let keys = 0;
  const count = (map: Map<number, number>, status: number) =>
    map.set(status, (map.get(status) ?? 0) + 1);

  log(
    `POST /v3/customers at ${CONNECTIONS} connections for ${LOAD_SECONDS} s; PostgreSQL down at ${POSTGRES_DOWN.atMs / 1000} s for ${POSTGRES_DOWN.forMs / 1000} s, Temporal at ${TEMPORAL_DOWN.atMs / 1000} s for ${TEMPORAL_DOWN.forMs / 1000} s…`,
  );
  const noAnswer: string[] = [];
  const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
  let resolveLoad!: (result: autocannon.Result) => void;
  let rejectLoad!: (error: unknown) => void;
  const load = new Promise<autocannon.Result>((resolve, reject) => {
    resolveLoad = resolve;
    rejectLoad = reject;
  });
  const instance = autocannon(
    {
      url: `${apiUrl}/v3/customers`,
      connections: CONNECTIONS,
      duration: LOAD_SECONDS,
      timeout: 20, // seconds: above the API's own budget (REQUEST_TIMEOUT, 15 s)
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      requests: [
        {
          method: 'POST',
          setupRequest: (request) => ({
            ...request,
            headers: { ...request.headers, 'idempotency-key': `chaos-${++keys}` },
            body: JSON.stringify({
              cpf: fakeCpf({ notStartingWith9: true }),
              name: 'Maria Silva',
              email: 'maria@example.com',
              phone: '+5511987654321',
            }),
          }),
          onResponse: (status, body, _context, headers) => {
            count(statuses, status);
            if (Date.now() - started > LOAD_SECONDS * 1000 - SETTLED_TAIL_MS)
              count(lateStatuses, status);
            if (status === 201 || status === 200)
              created.add((JSON.parse(body) as { id: string }).id);
            const retryAfter = Object.keys(headers ?? {}).some(
              (h) => h.toLowerCase() === 'retry-after',
            );
            if (status === 503 && !retryAfter) unannouncedRetry++;
          },
        },
      ],
    },
    (error: unknown, result) => (error ? rejectLoad(error) : resolveLoad(result)),
  );
  instance.on('reqError', (error: Error) => noAnswer.push(`at ${seconds()} s: ${error.message}`));
  const at = (ms: number) =>
    new Promise((resolve) => setTimeout(resolve, ms - (Date.now() - started)));
  const outages = (async () => {
    await at(POSTGRES_DOWN.atMs);
    log('stopping PostgreSQL');
    await stack.restartPostgres(POSTGRES_DOWN.forMs);
    log('PostgreSQL back');
    await at(TEMPORAL_DOWN.atMs);
    log('stopping the Temporal server');
    await stack.restartTemporal(TEMPORAL_DOWN.forMs);
    log('Temporal server back');
  })();
  const [result] = await Promise.all([load, outages]);

  // What the partner saw.
  const line = (map: Map<number, number>) =>
    [...map.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}: ${n}`)
      .join(', ');
  console.log('');
  console.log(`answers: ${line(statuses)}`);
  console.log(`answers in the last ${SETTLED_TAIL_MS / 1000} s: ${line(lateStatuses)}`);
  console.log(`no answer: ${result.errors} (of which timeouts ${result.timeouts})`);
  for (const line of noAnswer.slice(0, 10)) console.log(`  ${line}`);
  const serverErrors = [...statuses].filter(([s]) => s >= 500 && s !== 503);
  const problems: string[] = [];
  if (serverErrors.length > 0) problems.push(`5xx other than 503: ${JSON.stringify(serverErrors)}`);
  if (unannouncedRetry > 0) problems.push(`${unannouncedRetry} answers 503 without Retry-After`);
  if (result.timeouts + result.errors > 0) problems.push('requests without an answer');
  if ([...lateStatuses.keys()].some((s) => s !== 201 && s !== 200))
    problems.push('the API had not recovered by the end');

  // What the service kept.
  const database = createDatabase(stack.databaseUrl, { max: 4 });
  const temporal = await benchTemporalClient(stack.temporalAddress);
  const { connection } = temporal;
  const missing = new Set(created);
  const deadline = Date.now() + 60_000;
  while (missing.size > 0 && Date.now() < deadline) {
    for (const id of [...missing]) {
      try {
        const { status } = await temporal.workflow
          .getHandle(workflowIds.customerOnboarding(id))
          .describe();
        if (status.name === 'RUNNING') missing.delete(id);
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
    }
    if (missing.size > 0) await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  const eventCounts = await database.sql<{ id: string; n: number }[]>`
    select data->>'id' as id, count(*)::int as n from events
    where type = 'customer.created'
      and data->>'id' in (select jsonb_array_elements_text(${JSON.stringify([...created])}::jsonb))
    group by 1`;
  const once = eventCounts.filter((row) => row.n === 1).length;
  const twice = eventCounts.filter((row) => row.n > 1).length;
  console.log(
    `customers answered 201/200: ${created.size}; onboarding running: ${created.size - missing.size}; customer.created once: ${once}, more than once: ${twice}, missing: ${created.size - once - twice}`,
  );
  if (missing.size > 0) problems.push(`${missing.size} customers without a running onboarding`);
  if (once !== created.size) problems.push('customer.created not written exactly once for all');
  await connection.close();
  await database.close();

  console.log(problems.length === 0 ? 'nothing lost' : `FAILED: ${problems.join('; ')}`);
  process.exitCode = problems.length > 0 ? 1 : 0;
} finally {
  await stack.stop();
}
