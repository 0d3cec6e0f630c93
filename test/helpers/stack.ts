import { optOutUrl } from '../../src/domain/reminders/opt-out-token.js';
import { signingUrls } from '../../src/domain/loans/signing-token.js';
import { acceptanceUrls } from '../../src/domain/loans/acceptance-token.js';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { connectTemporalClient, lazyTemporalClient } from '../../src/temporal/client.js';
import { customerKeysIn } from '../../src/temporal/customer-keys.js';
import { inject } from 'vitest';
import { createActivities, type Activities, type ActivityDeps } from '../../activities/index.js';
import { createApp } from '../../src/app.js';
import { createSealedBox } from '../../src/domain/sealed-box.js';
import { createFileStore } from '../../src/storage/create-file-store.js';
import type { FileStore } from '../../src/storage/file-store.js';
import {
  DEVELOPMENT_PSP_WEBHOOK_SECRET,
  loadConfig,
  type Config,
  pixPayee,
} from '../../src/config.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { createHttpMetrics } from '../../src/http/metrics.js';
import { createLogger } from '../../src/logger.js';
import type { DestinationStream } from 'pino';
import { appendFileSync, readFileSync } from 'node:fs';
import type { RecordedExchange } from '../../src/http/examples/examples.js';
import { startWorker } from '../../src/worker/start-worker.js';
import { createMailer } from '../../src/mail/mailer.js';
import { freePort } from '../../src/devstack/free-port.js';
import { pspClientFor } from '../../src/psp/client.js';
import { simulatorControl, type PspSimulator } from '../../src/devstack/psp-simulator/index.js';

export const OPS_TOKEN = 'test-ops-token-0123456789';

export interface TestStack {
  baseUrl: string;
  /** Starts another worker on this stack's task queue (for tests that stop and replace workers). */
  startWorker(): ReturnType<typeof startWorker>;
  /** This stack's activities, called directly (for tests of an activity's own guarantees). */
  activities(): Activities;
  /** What a worker of this stack is given for webhook deliveries. */
  webhooks: ActivityDeps['webhooks'];
  /** The local file store's folder. */
  /** The API's file store (the run's MinIO bucket). */
  files: FileStore;
  config: Config;
  database: Database;
  temporal: Client;
  /**
   * This stack's account at the run's PSP simulator (its PSP_* settings are in `config.psp`), and
   * the simulator's controls; null when `env` names a PSP of its own.
   */
  psp: { clientId: string; control: PspSimulator['control'] } | null;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Run a worker (with its outbox sweeper) on this stack's task queue. Default true. */
  worker?: boolean;
  /** Temporal address the API uses; point it at a closed port to model an outage. */
  apiTemporalAddress?: string;
  /** Database URL the API uses; point it at a closed port to model an outage. */
  apiDatabaseUrl?: string;
  /** Task queue shared with another stack (so one stack's worker serves another's API). */
  taskQueue?: string;
  /** Extra configuration, as environment variables. */
  env?: Record<string, string>;
  /** The API's clock; see {@link TestClock}. */
  clock?: TestClock;
  /** A CA (PEM) the worker trusts for webhook deliveries: the test receiver's. */
  webhookCa?: string;
  /** Where the API's and the worker's log lines go (with LOG_LEVEL in `env`): a test reads them. */
  logDestination?: DestinationStream;
}

/** Real time plus an offset the test moves forward: tokens expire, idempotency keys age. */
export class TestClock {
  private offsetMs = 0;
  private frozenAt: number | undefined;
  now = (): Date => new Date((this.frozenAt ?? Date.now()) + this.offsetMs);
  advance(ms: number): void {
    this.offsetMs += ms;
  }
  /** Stops time where it is; only advance() moves it from then on. */
  freeze(): void {
    this.frozenAt = Date.now();
  }
}

/**
 * The real service on the run's shared servers: the API listening on a free port and a worker
 * polling a task queue of its own, so test files never take each other's tasks.
 */
export async function startStack(options: StackOptions = {}): Promise<TestStack> {
  const taskQueue = options.taskQueue ?? `test-${randomUUID()}`;
  const port = await freePort();
  const psp = options.env?.PSP_API_URL ? null : await pspAccount(port, options.env ?? {});
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: inject('databaseUrl'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: taskQueue,
    OPS_TOKEN,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    OUTBOX_SWEEP_INTERVAL: '200ms',
    ...inject('objectStoreEnv'),
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    SANDBOX_REVIEW_DELAY: '1s',
    SMTP_URL: inject('smtpUrl'),
    ...psp?.env,
    ...options.env,
  });
  const logger = createLogger(config.logLevel, 'test', options.logDestination);
  const database = createDatabase(options.apiDatabaseUrl ?? config.databaseUrl, { max: 5 });
  // The API's client, made as src/main/api.ts makes it (or never connected, to a dead address).
  const customerKeys = customerKeysIn(database.db, config.temporal.payloadKeys);
  const temporal = options.apiTemporalAddress
    ? lazyTemporalClient({
        ...config.temporal,
        customerKeys,
        address: options.apiTemporalAddress,
      })
    : await connectTemporalClient({ ...config.temporal, customerKeys });

  const webhooks: ActivityDeps['webhooks'] = {
    sealedBox: createSealedBox(config.keys.dataEncryption),
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    allowedPorts: config.webhookAllowedPorts,
    allowLoopbackHttp: config.webhookAllowLoopbackHttp,
    ...(options.webhookCa ? { ca: options.webhookCa } : {}),
  };
  const offers = {
    validityMs: config.offerValidityMs,
    renewalDelayMs: config.offerRenewalDelayMs,
  };
  const loans = {
    signingUrl: signingUrls(config.publicBaseUrl, config.keys.signingLink),
    agreementAcceptanceUrl: acceptanceUrls(config.publicBaseUrl, config.keys.signingLink),
    iof: config.iof,
    pix: pixPayee(config),
    refundAfterMs: config.refundAfterMs,
    payoutPollIntervalMs: config.payoutPollIntervalMs,
    writeOffAfterDays: config.writeOffAfterDays,
    agreementBreakDays: config.agreementBreakDays,
  };
  const files = createFileStore(config.fileStore);
  const deniedDocumentRetentionMs = config.retention.deniedDocumentsMs;
  // The worker's mail (an operator's enrollment code): the run's Mailpit, like the API's.
  const mailer = createMailer({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, logger });
  const approvals = { decisionKeys: config.keys.approvalDecision, mailer };
  const pspClient = config.psp && pspClientFor(config.psp);
  const reminders = {
    optOutUrl: (customerId: string) =>
      optOutUrl(config.publicBaseUrl, config.keys.signingLink, customerId),
  };
  const stops: (() => Promise<void>)[] = [];
  /** A worker of this stack, as src/main/worker.ts starts one, on the database given. */
  const startWorkerOn = (db: typeof database.db) =>
    startWorker(
      {
        ...config.temporal,
        taskQueue,
        maintenanceIntervalMs: config.outboxSweepIntervalMs,
        workflowBundlePath: inject('workflowBundlePath'),
      },
      {
        db,
        logger,
        webhooks,
        offers,
        loans,
        files,
        deniedDocumentRetentionMs,
        approvals,
        psp: pspClient,
        reminders,
      },
    );
  if (options.worker ?? true) {
    const workerDatabase = createDatabase(config.databaseUrl, { max: 5 });
    const worker = await startWorkerOn(workerDatabase.db);
    stops.push(async () => {
      await worker.stop();
      await workerDatabase.close();
    });
  }

  const { koa: app, close: closeApp } = createApp({
    config,
    database,
    files,
    temporal,
    logger,
    metrics: createHttpMetrics({ processMetrics: false }),
    ...(options.clock ? { clock: options.clock.now } : {}),
    // `npm run examples:record`: every partner exchange of the run, for the reference's examples.
    ...(process.env.RECORD_EXAMPLES
      ? {
          recordExchange: (exchange: RecordedExchange) =>
            appendFileSync(process.env.RECORD_EXAMPLES!, `${JSON.stringify(exchange)}\n`),
        }
      : {}),
  });
  const server = app.listen(port, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  // With OPS_PORT in `env`, the ops listener too, as src/main/api.ts opens it.
  const opsServer =
    config.opsPort === undefined ? undefined : app.listen(config.opsPort, '127.0.0.1');
  if (opsServer) await new Promise<void>((resolve) => opsServer.once('listening', resolve));

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    startWorker: () => startWorkerOn(database.db),
    activities: () =>
      createActivities({
        db: database.db,
        logger,
        identity: 'test',
        temporal,
        taskQueue,
        webhooks,
        offers,
        loans,
        files,
        deniedDocumentRetentionMs,
        approvals,
        psp: pspClient,
        reminders,
      }),
    webhooks,
    files,
    config,
    database,
    temporal,
    psp: psp && { clientId: psp.clientId, control: psp.control },
    async stop() {
      for (const listener of [server, opsServer])
        if (listener)
          await new Promise<void>((resolve) => {
            listener.close(() => resolve());
            listener.closeAllConnections();
          });
      await closeApp();
      for (const stop of stops) await stop();
      mailer.close();
      await temporal.connection.close();
      await database.close();
    },
  };
}

/** The stack's PSP_* settings as environment variables, for the API and worker processes it spawns. */
export const pspEnvOf = (config: Config): Record<string, string> =>
  config.psp
    ? {
        PSP_API_URL: config.psp.apiUrl,
        PSP_CLIENT_ID: config.psp.clientId,
        PSP_CLIENT_SECRET: config.psp.clientSecret,
        PSP_TLS_CERT: config.psp.tls.certFile,
        PSP_TLS_KEY: config.psp.tls.keyFile,
        PSP_TLS_CA: config.psp.tls.caFile,
      }
    : {};

/**
 * An account of the stack's own at the run's PSP simulator (global-setup.ts starts one for every
 * file): its own client credentials, and its Pix and payout notifications sent to this stack's
 * API, signed with the secret the API will check. Returned as the API's and worker's PSP_* settings.
 */
async function pspAccount(port: number, env: Record<string, string>) {
  const simulator = inject('pspSimulator');
  const control = simulatorControl(simulator.url, readFileSync(simulator.caFile, 'utf8'));
  const clientId = `stack-${randomUUID()}`;
  const clientSecret = randomBytes(24).toString('hex');
  const psp = `http://127.0.0.1:${port}/psp/v1`;
  const webhookSecret = env.PSP_WEBHOOK_SECRET ?? DEVELOPMENT_PSP_WEBHOOK_SECRET;
  const registered = await control('PUT', `/clients/${clientId}`, {
    secret: clientSecret,
    // Under mutual TLS in front (PSP_WEBHOOK_AUTH=mtls) the API takes no signature: nothing sent.
    ...(env.PSP_WEBHOOK_AUTH === 'mtls'
      ? {}
      : {
          notify: { url: `${psp}/pix`, secret: webhookSecret },
          notifyPayouts: { url: `${psp}/payouts`, secret: webhookSecret },
        }),
  });
  if (registered.status !== 201)
    throw new Error(`the PSP simulator refused the stack's account: ${JSON.stringify(registered)}`);
  return {
    clientId,
    control,
    env: {
      PSP_API_URL: simulator.url,
      PSP_CLIENT_ID: clientId,
      PSP_CLIENT_SECRET: clientSecret,
      PSP_TLS_CERT: simulator.clientCertFile,
      PSP_TLS_KEY: simulator.clientKeyFile,
      PSP_TLS_CA: simulator.caFile,
    },
  };
}

export { eventually } from './eventually.js';
