/**
 * `npm run bench:webhooks`: N events fanned out to E endpoints on a local HTTPS receiver, through
 * the real pipeline (fan-out in the event's transaction → outbox → one workflow per delivery →
 * signed HTTPS attempt). Prints deliveries per second and the latency from an event's commit to
 * its first attempt arriving, then, on the same Temporal server, the raw rate of a workflow that
 * runs one activity — so the cost of a delivery relative to the bare engine is visible.
 *
 * Two phases: a burst (every event at once: throughput, and latency including the backlog), then a
 * paced phase below capacity (latency as a partner sees it in steady traffic).
 * BENCH_EVENTS (default 200), BENCH_ENDPOINTS (default 10) and BENCH_PACED_PER_SECOND (default 1.5
 * events, i.e. 15 deliveries a second, for 20 s) size the run.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createPartner } from '../src/commands/create-partner.js';
import { loadConfig, pixPayee } from '../src/config.js';
import { createDatabase } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';
import { webhookEndpoints } from '../src/db/schema/index.js';
import { startEmbeddedPostgres } from '../src/devstack/embedded-postgres.js';
import { resolveTemporalCli } from '../src/devstack/temporal-binaries.js';
import { startTemporalDevServer } from '../src/devstack/temporal-dev-server.js';
import { keyRing } from '../src/domain/key-ring.js';
import { createSealedBox } from '../src/domain/sealed-box.js';
import { createLocalFileStore } from '../src/storage/file-store.js';
import { newId } from '../src/domain/ids.js';
import { createLogger } from '../src/logger.js';
import { createMailer } from '../src/mail/mailer.js';
import { startWorker } from '../src/worker/start-worker.js';
import { payloadDataConverter } from '../src/temporal/payload-codec.js';
import { recordAndFanOut, startDeliveries } from '../src/webhooks/fan-out.js';
import { newEndpointSecret } from '../src/webhooks/signature.js';
import { startReceiver } from '../test/helpers/https-receiver.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 10);
const PACED_PER_SECOND = Number(process.env.BENCH_PACED_PER_SECOND ?? 1.5);
const PACED_SECONDS = 20;
const log = (line: string) => console.log(`[bench] ${line}`);
/** The development defaults the worker's loan activities read (IOF rates, the sandbox's Pix key). */
const developmentConfig = loadConfig({
  NODE_ENV: 'development',
  DATABASE_URL: 'postgres://unused',
  FILE_STORE: 'local',
});

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

Runtime.install({ logger: new DefaultLogger('WARN') });
const scratch = await mkdtemp(join(tmpdir(), 'bench-webhooks-'));
const cli = await resolveTemporalCli(log);
const postgres = await startEmbeddedPostgres({
  dataDir: join(scratch, 'pg'),
  port: 5499,
  database: 'bench',
  unsafeFast: true,
});
const temporal = await startTemporalDevServer({ cli, port: 7299 });
const receiver = await startReceiver();
const database = createDatabase(postgres.url, { max: 20 });
const logger = createLogger('warn', 'bench');
const taskQueue = `bench-${randomUUID()}`;
const sealedBox = createSealedBox(
  keyRing([{ id: 'bench', secret: Buffer.from('bench-data-encryption-key-0123456789abcdef') }]),
);
// Payloads encrypted as in production, by the worker and by this client alike.
const payloadKeys = keyRing([
  { id: 'bench', secret: Buffer.from('bench-temporal-payload-key-0123456789abcdef') },
]);
const client = new Client({
  connection: temporal.connection,
  dataConverter: payloadDataConverter({ payloadKeys }),
});

try {
  await runMigrations(postgres.url);
  log('bundling workflows and starting the worker…');
  const worker = await startWorker(
    {
      address: temporal.address,
      namespace: 'default',
      payloadKeys,
      taskQueue,
      maintenanceIntervalMs: 1000,
    },
    {
      db: database.db,
      logger,
      webhooks: {
        sealedBox,
        allowPrivateTargets: true,
        allowedPorts: [Number(new URL(receiver.url()).port)],
        ca: receiver.ca,
      },
      offers: { validityMs: 30 * 86_400_000, renewalDelayMs: 86_400_000 },
      // Deliveries never touch files; a scratch folder stands as the store.
      files: createLocalFileStore(join(scratch, 'files')),
      deniedDocumentRetentionMs: developmentConfig.retention.deniedDocumentsMs,
      // Deliveries move no money.
      psp: null,
      loans: {
        signingUrl: (loanId) => `http://127.0.0.1/hosted/signing/${loanId}`,
        agreementAcceptanceUrl: (agreementId) =>
          `http://127.0.0.1/hosted/agreements/${agreementId}`,
        iof: developmentConfig.iof,
        pix: pixPayee(developmentConfig),
      },
      approvals: {
        decisionKeys: developmentConfig.keys.approvalDecision,
        // No staff change runs here: a mailer with no server.
        mailer: createMailer({ smtpUrl: undefined, from: 'bench', logger }),
      },
    },
  );

  const partner = await createPartner(database.db, { name: 'Bench' });
  const tenant = { partnerId: partner.partner_id, environment: 'sandbox' as const };
  await database.db.insert(webhookEndpoints).values(
    Array.from({ length: ENDPOINTS }, (_, i) => ({
      id: newId('we'),
      ...tenant,
      url: receiver.url(`/endpoint-${i}`),
      events: [],
      status: 'enabled' as const,
      secretSealed: sealedBox.seal(newEndpointSecret()),
    })),
  );

  // ---- The webhook pipeline ----
  const committedAt = new Map<string, number>();
  const firstArrival = new Map<string, number>(); // `${webhook-id}${path}` → when it first arrived
  receiver.answer((request) => {
    const key = `${request.headers['webhook-id']}${request.path}`;
    if (!firstArrival.has(key)) firstArrival.set(key, request.at);
    return { status: 200 };
  });
  const commitEvent = async () => {
    const id = newId('evt');
    const outbox = await database.db.transaction((tx) =>
      recordAndFanOut(
        tx,
        tenant,
        [
          {
            id,
            type: 'customer.created',
            data: { id: `cust_${id.slice(4)}` },
            createdAt: new Date(),
          },
        ],
        taskQueue,
      ),
    );
    committedAt.set(id, Date.now());
    await startDeliveries({ db: database.db, temporal: client, logger }, outbox);
    return id;
  };
  const latenciesOf = (ids: string[]) =>
    [...firstArrival.entries()]
      .filter(([key]) => ids.includes(key.slice(0, 36)))
      .map(([key, at]) => at - committedAt.get(key.slice(0, 36))!);
  const waitForArrivals = async (ids: string[]) => {
    const deadline = Date.now() + 10 * 60_000;
    while (latenciesOf(ids).length < ids.length * ENDPOINTS && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const expected = EVENTS * ENDPOINTS;
  log(
    `burst: ${EVENTS} events at once, fanned out to ${ENDPOINTS} endpoints (${expected} deliveries)…`,
  );
  const started = Date.now();
  const burstIds = await Promise.all(Array.from({ length: EVENTS }, commitEvent));
  await waitForArrivals(burstIds);
  const burst = latenciesOf(burstIds);
  const elapsed =
    (Math.max(
      ...burstIds.flatMap((id) =>
        [...firstArrival.entries()].filter(([k]) => k.startsWith(id)).map(([, at]) => at),
      ),
    ) -
      started) /
    1000;
  const deliveryRate = burst.length / elapsed;

  const paced = Math.round(PACED_PER_SECOND * PACED_SECONDS);
  log(
    `paced: ${paced} events over ${PACED_SECONDS} s (${(PACED_PER_SECOND * ENDPOINTS).toFixed(0)} deliveries/s)…`,
  );
  const pacedIds: string[] = [];
  for (let i = 0; i < paced; i++) {
    pacedIds.push(await commitEvent());
    await new Promise((r) => setTimeout(r, 1000 / PACED_PER_SECOND));
  }
  await waitForArrivals(pacedIds);
  const steady = latenciesOf(pacedIds);

  // ---- The bare engine: a workflow that runs one activity ----
  const RAW = expected;
  log(`raw: ${RAW} one-activity workflows on the same server…`);
  const rawStarted = Date.now();
  await Promise.all(
    Array.from({ length: RAW }, (_, i) =>
      client.workflow.execute('smokeCheckWorkflow', {
        taskQueue,
        workflowId: `bench-raw-${i}-${randomUUID()}`,
        args: [{ smokeCheckId: `smk_${randomUUID().replaceAll('-', '')}`, delayMs: 0 }],
      }),
    ),
  );
  const rawRate = RAW / ((Date.now() - rawStarted) / 1000);

  console.log(
    [
      '',
      `webhook deliveries (burst): ${burst.length}/${expected} in ${elapsed.toFixed(1)} s = ${deliveryRate.toFixed(1)} deliveries/s`,
      `commit → first attempt:     burst p50 ${percentile(burst, 50)} ms, p99 ${percentile(burst, 99)} ms (backlog included)`,
      `                            paced p50 ${percentile(steady, 50)} ms, p99 ${percentile(steady, 99)} ms (${steady.length} deliveries at ${(PACED_PER_SECOND * ENDPOINTS).toFixed(0)}/s)`,
      `one-activity workflows:     ${rawRate.toFixed(1)} workflows/s (same server, same worker)`,
      `delivery / raw ratio:       ${(deliveryRate / rawRate).toFixed(2)}`,
      '',
    ].join('\n'),
  );
  await worker.stop();
} finally {
  await receiver.close();
  await database.close();
  await temporal.teardown();
  await postgres.stop();
  await rm(scratch, { recursive: true, force: true });
}
