/**
 * `npm run check:temporal-server`: proves the real Temporal server (src/devstack/temporal-server.ts)
 * on a fresh embedded PostgreSQL — built or taken from the cache, schemas set up, namespace and
 * search attributes registered — runs this project's workflows with this project's worker and
 * API, keeps them across a restart of the server (their state is in PostgreSQL), and answers list
 * queries on the search attributes, both over gRPC and through its Web UI. Prints the timings.
 * Not part of `npm test` (it costs the server's build on a new machine); everything it starts it
 * stops, and its temporary folder is removed (`--keep` keeps it, with the logs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { tsToDate } from '@temporalio/common/lib/time.js';
import { DEVELOPMENT_OPS_TOKEN, developmentRing } from '../config.js';
import { migrateForApplication } from '../devstack/database-roles.js';
import { startEmbeddedPostgres, type RunningPostgres } from '../devstack/embedded-postgres.js';
import { freePort } from '../devstack/free-port.js';
import {
  resolveTemporalServer,
  resolveTemporalUi,
  startTemporalServer,
  type RunningTemporalServer,
  type TemporalServerOptions,
} from '../devstack/temporal-server.js';
import { projectRoot } from '../project-root.js';
import { payloadDataConverter } from '../temporal/payload-codec.js';
import { searchAttributes } from '../temporal/search-attributes.js';
import { heapFlags } from './node-flags.js';

const say = (line: string) => console.log(`[check] ${line}`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const timings: [string, string][] = [];
async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const result = await work();
  timings.push([label, seconds(Date.now() - started)]);
  say(`${label}: ${seconds(Date.now() - started)}`);
  return result;
}

const keep = process.argv.includes('--keep');
const dir = await mkdtemp(join(tmpdir(), 'check-temporal-server-'));
let postgresServer: RunningPostgres | undefined;
let temporal: RunningTemporalServer | undefined;
const children: ChildProcess[] = [];
let failed = false;

try {
  const progress = (line: string) => say(line);
  await timed('resolve Temporal server (build or cache)', () => resolveTemporalServer(progress));
  await timed('resolve Temporal UI server (build or cache)', () => resolveTemporalUi(progress));
  await timed('resolve Temporal server again (cached)', () => resolveTemporalServer(progress));

  const postgresPort = await freePort();
  postgresServer = await timed('start embedded PostgreSQL (fresh)', () =>
    startEmbeddedPostgres({
      dataDir: join(dir, 'postgres'),
      port: postgresPort,
      database: 'embedded_credit',
    }),
  );
  const options: TemporalServerOptions = {
    postgres: { host: '127.0.0.1', port: postgresPort, user: 'postgres', password: 'postgres' },
    dataDir: join(dir, 'temporal'),
    frontendPort: await freePort(),
    uiPort: await freePort(),
    progress,
  };
  temporal = await timed('start Temporal server, first (databases, schemas, namespace)', () =>
    startTemporalServer(options),
  );
  say(`Temporal at ${temporal.address}, UI at ${temporal.uiUrl}, log ${temporal.logFile}`);

  const databaseUrl = await migrateForApplication(postgresServer.url);
  const apiPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    PORT: String(apiPort),
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    FILE_STORE: 'local',
    UPLOADS_DIR: join(dir, 'uploads'),
    WORKER_METRICS_PORT: '0',
  };
  for (const entry of ['src/main/worker.ts', 'src/main/api.ts']) {
    children.push(
      spawn(process.execPath, [...heapFlags, '--import', 'tsx', join(projectRoot, entry)], {
        cwd: projectRoot,
        env,
        stdio: ['ignore', 'inherit', 'inherit'],
      }),
    );
  }
  const api = `http://127.0.0.1:${apiPort}`;
  await timed('start the worker and the API', () =>
    until('the API is ready', 120_000, async () => (await fetch(`${api}/readyz`)).ok),
  );

  // A smoke check through the API: a row, a workflow with a durable timer, an activity writing the row.
  const ops = {
    authorization: `Bearer ${DEVELOPMENT_OPS_TOKEN}`,
    'content-type': 'application/json',
  };
  const created = await fetch(`${api}/ops/v1/smoke-checks`, {
    method: 'POST',
    headers: { ...ops, 'idempotency-key': randomUUID() },
    body: JSON.stringify({ delay: '20s' }),
  });
  if (created.status !== 202)
    throw new Error(`smoke check: ${created.status} ${await created.text()}`);
  const check = (await created.json()) as { id: string; workflow_id: string };
  say(`smoke check ${check.id} started (workflow ${check.workflow_id}, a 20 s timer)`);

  const connect = async (server: RunningTemporalServer) =>
    new Client({
      connection: await Connection.connect({ address: server.address }),
      namespace: server.namespace,
      // The API and worker run as development: the published payload key.
      dataConverter: payloadDataConverter({
        payloadKeys: developmentRing('TEMPORAL_PAYLOAD_KEYS'),
      }),
    });
  let client = await connect(temporal);
  await until('the timer is started', 30_000, async () => {
    const history = await client.workflow.getHandle(check.workflow_id).fetchHistory();
    return (history.events ?? []).some((event) => event.timerStartedEventAttributes);
  });
  say('the workflow is waiting on its timer: restarting the Temporal server');
  await client.connection.close();

  const restart = { down: new Date().toISOString(), up: '' };
  await timed('stop Temporal server (SIGTERM, wait)', () => temporal!.stop());
  temporal = undefined;
  temporal = await timed('start Temporal server, again (schemas current)', () =>
    startTemporalServer(options),
  );
  restart.up = new Date().toISOString();
  client = await connect(temporal);

  await timed('smoke check completed after the restart', () =>
    until('the smoke check completes', 90_000, async () => {
      const response = await fetch(`${api}/ops/v1/smoke-checks/${check.id}`, { headers: ops });
      return ((await response.json()) as { status: string }).status === 'completed';
    }),
  );
  const described = await client.workflow.getHandle(check.workflow_id).describe();
  if (described.status.name !== 'COMPLETED') throw new Error(`workflow ${described.status.name}`);
  const events = (await client.workflow.getHandle(check.workflow_id).fetchHistory()).events ?? [];
  const at = (found: (typeof events)[number] | undefined) =>
    found?.eventTime ? tsToDate(found.eventTime).toISOString() : undefined;
  const timerStarted = at(events.find((event) => event.timerStartedEventAttributes));
  const timerFired = at(events.find((event) => event.timerFiredEventAttributes));
  if (!timerStarted || !timerFired) throw new Error('the workflow completed without its timer');
  say(
    `timer started ${timerStarted}, server down ${restart.down} to ${restart.up}, timer fired ${timerFired}`,
  );
  say(`workflow ${check.workflow_id}: COMPLETED, timer fired, row completed`);

  // Search attributes: a workflow (no worker polls its queue) carrying every one of them.
  const marker = randomUUID().slice(0, 8);
  const probe = await client.workflow.start('searchAttributeProbe', {
    taskQueue: `check-search-attributes-${marker}`,
    workflowId: `check/search-attributes/${marker}`,
    typedSearchAttributes: [
      { key: searchAttributes.PartnerId, value: `ptn_${marker}` },
      { key: searchAttributes.Environment, value: 'sandbox' },
      { key: searchAttributes.CustomerId, value: `cust_${marker}` },
      { key: searchAttributes.LoanId, value: `ln_${marker}` },
      { key: searchAttributes.EndpointId, value: `we_${marker}` },
      { key: searchAttributes.EventId, value: `evt_${marker}` },
    ],
  });
  const query = `PartnerId = "ptn_${marker}" AND CustomerId = "cust_${marker}" AND LoanId = "ln_${marker}" AND EndpointId = "we_${marker}" AND EventId = "evt_${marker}" AND Environment = "sandbox" AND ExecutionStatus = "Running"`;
  await until('the list query finds the probe', 30_000, async () => {
    const found: string[] = [];
    for await (const execution of client.workflow.list({ query })) found.push(execution.workflowId);
    return found.length === 1 && found[0] === probe.workflowId;
  });
  say(`list query on all six search attributes: found ${probe.workflowId}`);
  await until('the list query finds the smoke check', 30_000, async () => {
    let count = 0;
    for await (const _ of client.workflow.list({
      query: `WorkflowId = "${check.workflow_id}" AND ExecutionStatus = "Completed"`,
    }))
      count++;
    return count === 1;
  });
  say('list query by WorkflowId and ExecutionStatus: found the completed smoke check');
  const viaUi = await fetch(
    `${temporal.uiUrl}/api/v1/namespaces/${temporal.namespace}/workflows?query=${encodeURIComponent(`PartnerId = "ptn_${marker}"`)}`,
  );
  const uiBody = (await viaUi.json()) as { executions?: { execution?: { workflowId?: string } }[] };
  if (uiBody.executions?.[0]?.execution?.workflowId !== probe.workflowId) {
    throw new Error(
      `the UI's API did not list the probe: ${viaUi.status} ${JSON.stringify(uiBody)}`,
    );
  }
  say(`the Web UI (${temporal.uiUrl}) lists it through the same query`);
  await probe.terminate('check done');
  await client.connection.close();

  console.log('\nTemporal server check passed.\n');
  for (const [label, value] of timings) console.log(`  ${label.padEnd(62)} ${value}`);
  console.log('');
} catch (error) {
  failed = true;
  console.error(
    `\n[check] FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
} finally {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
  await temporal?.stop().catch((error: unknown) => say(`Temporal: ${String(error)}`));
  await postgresServer?.stop().catch((error: unknown) => say(`PostgreSQL: ${String(error)}`));
  if (keep) say(`kept ${dir}`);
  else await rm(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

async function until(
  what: string,
  timeoutMs: number,
  ready: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await ready()) return;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting until ${what}${last instanceof Error ? ` (last error: ${last.message})` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
