import { optOutUrl } from '../domain/reminders/opt-out-token.js';
import { loadConfig, pixPayee } from '../config.js';
import { createDatabase } from '../db/client.js';
import { checkDatabaseAtStart } from '../db/start-check.js';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createSealedBox } from '../domain/sealed-box.js';
import { createMailer } from '../mail/mailer.js';
import { makeTelemetryFilterString } from '@temporalio/worker';
import { prebuiltWorkflowBundle, Runtime } from '../worker/create-worker.js';
import { temporalLogger } from '../worker/temporal-logger.js';
import { freePort } from '../devstack/free-port.js';
import { signingUrls } from '../domain/loans/signing-token.js';
import { acceptanceUrls } from '../domain/loans/acceptance-token.js';
import { createFileStore } from '../storage/create-file-store.js';
import { createWorkerMetrics, serveWorkerMetrics } from '../worker/metrics.js';
import {
  certificatesInUse,
  registerCertificateExpiry,
} from '../observability/certificate-expiry.js';
import { startWorker } from '../worker/start-worker.js';
import { pspClientFor } from '../psp/client.js';
import { startTracing } from '../observability/tracing.js';
import { runMain } from './run-main.js';

await runMain('worker', async (logger) => {
  const config = loadConfig();
  logger.level = config.logLevel;
  // Before the workers are made: they add their tracing parts only when it is on.
  const tracing = await startTracing(config.tracing, 'embedded-credit-worker');
  // runMain owns the signals, so the shutdown order (housekeeping, worker, connections) stays ours.
  // The SDK's own logs (the worker's, Core's, workflows' and activities' `log`) are lines of this
  // process's pino logger: one JSON format for the log shipper (issue 42).
  // With the worker's /metrics on, the SDK's figures too: Core exports them on a loopback port of
  // its own, which the worker's /metrics appends (src/worker/metrics.ts).
  const sdkMetricsPort = config.workerMetricsPort > 0 ? await freePort() : undefined;
  Runtime.install({
    shutdownSignals: [],
    logger: temporalLogger(logger),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      ...(sdkMetricsPort
        ? {
            metrics: {
              prometheus: {
                bindAddress: `127.0.0.1:${sdkMetricsPort}`,
                countersTotalSuffix: true,
                useSecondsForDurations: true,
              },
            },
          }
        : {}),
    },
  });
  // Migrations are the migrate command's (as the owner); this role reads and writes rows only.
  const database = createDatabase(config.databaseUrl, { max: config.databasePoolSize });
  await checkDatabaseAtStart(database.sql, config.nodeEnv, logger);
  const metrics = createWorkerMetrics({ processMetrics: true });
  registerCertificateExpiry(metrics.registry, certificatesInUse(config));
  // Staff changes mail their operator a code (issue 37): the same SMTP server as the API's.
  const mailer = createMailer({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, logger });
  const metricsServer =
    config.workerMetricsPort > 0
      ? await serveWorkerMetrics(
          metrics,
          config.workerMetricsPort,
          config.workerMetricsHost,
          sdkMetricsPort ? `http://127.0.0.1:${sdkMetricsPort}/metrics` : undefined,
        )
      : undefined;
  const worker = await startWorker(
    {
      // Address, namespace, task queue, payload keys, TLS and API key.
      ...config.temporal,
      maintenanceIntervalMs: config.outboxSweepIntervalMs,
      maxCachedWorkflows: config.workerMaxCachedWorkflows,
      reconciliationTime: config.reconciliationTime,
      // Production runs the bundle `npm run build` made, or the one WORKFLOW_BUNDLE names (a test
      // run's, made from the sources at its start); elsewhere the sources, never a stale build.
      ...(config.workflowBundle
        ? { workflowBundlePath: config.workflowBundle }
        : config.nodeEnv === 'production'
          ? { workflowBundlePath: requirePrebuiltBundle() }
          : {}),
    },
    {
      db: database.db,
      logger,
      files: createFileStore(config.fileStore),
      deniedDocumentRetentionMs: config.retention.deniedDocumentsMs,
      approvals: { decisionKeys: config.keys.approvalDecision, mailer },
      reminders: {
        optOutUrl: (customerId) =>
          optOutUrl(config.publicBaseUrl, config.keys.signingLink, customerId),
      },
      psp: config.psp && pspClientFor(config.psp),
      metrics,
      offers: { validityMs: config.offerValidityMs, renewalDelayMs: config.offerRenewalDelayMs },
      loans: {
        signingUrl: signingUrls(config.publicBaseUrl, config.keys.signingLink),
        agreementAcceptanceUrl: acceptanceUrls(config.publicBaseUrl, config.keys.signingLink),
        iof: config.iof,
        pix: pixPayee(config),
        refundAfterMs: config.refundAfterMs,
        payoutPollIntervalMs: config.payoutPollIntervalMs,
        writeOffAfterDays: config.writeOffAfterDays,
        agreementBreakDays: config.agreementBreakDays,
      },
      webhooks: {
        sealedBox: createSealedBox(config.keys.dataEncryption),
        allowPrivateTargets: config.webhookAllowPrivateTargets,
        allowedPorts: config.webhookAllowedPorts,
        allowLoopbackHttp: config.webhookAllowLoopbackHttp,
        ...(config.webhookCaFile ? { ca: await readFile(config.webhookCaFile, 'utf8') } : {}),
      },
    },
  );
  logger.info(
    { taskQueue: config.temporal.taskQueue, namespace: config.temporal.namespace },
    'worker running',
  );
  // Under `npm run dev`: the supervisor prints its banner once the worker polls (last on screen).
  process.send?.({ type: 'ready' });
  return async () => {
    metricsServer?.close();
    await worker.stop();
    mailer.close();
    await database.close();
    await tracing?.shutdown();
  };
});

function requirePrebuiltBundle(): string {
  if (!existsSync(prebuiltWorkflowBundle)) {
    throw new Error(
      `${prebuiltWorkflowBundle} is missing: run \`npm run build\` before starting a production worker.`,
    );
  }
  return prebuiltWorkflowBundle;
}
