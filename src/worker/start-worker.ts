import { Client, Connection } from '@temporalio/client';
import {
  connectionSecurity,
  temporalConnectionOptions,
  withTracing,
  type TemporalSettings,
} from '../temporal/client.js';
import { customerKeysIn } from '../temporal/customer-keys.js';
import { payloadDataConverter } from '../temporal/payload-codec.js';
import type { ActivityDeps } from '../../activities/index.js';
import { createWorkers, NativeConnection } from './create-worker.js';
import { startMaintenance } from './maintenance.js';
import { createWorkerMetrics, type WorkerMetrics } from './metrics.js';
import {
  ensureReconciliationSchedule,
  type DailyTime,
} from '../temporal/reconciliation-schedule.js';

/** `config.temporal` (address, namespace, payload keys, TLS, API key) and the worker's own. */
export interface WorkerSettings extends TemporalSettings {
  taskQueue: string;
  maintenanceIntervalMs: number;
  workflowBundlePath?: string;
  /** Workflows kept in memory between tasks (WORKER_MAX_CACHED_WORKFLOWS); see create-worker.ts. */
  maxCachedWorkflows?: number;
  /**
   * RECONCILIATION_TIME: when the daily reconciliation's schedule fires (São Paulo; default
   * 00:30), or null for no schedule. Made only where a PSP is configured.
   */
  reconciliationTime?: DailyTime | null;
}

/**
 * A worker process's moving parts — the Temporal workers (the service's queue and the webhook
 * deliveries') and the housekeeping loop — started together and stopped in order (housekeeping,
 * then the workers draining their tasks, then the connections). The worker process and the tests both start workers this way.
 */
export async function startWorker(
  settings: WorkerSettings,
  deps: Pick<
    ActivityDeps,
    | 'db'
    | 'logger'
    | 'webhooks'
    | 'offers'
    | 'loans'
    | 'files'
    | 'deniedDocumentRetentionMs'
    | 'approvals'
    | 'psp'
    | 'reminders'
  > & {
    metrics?: WorkerMetrics;
  },
) {
  const connection = await NativeConnection.connect({
    address: settings.address,
    ...connectionSecurity(settings),
  });
  // One codec for the worker and its activities' client: the same keys either way.
  const dataConverter = payloadDataConverter({
    ...settings,
    customerKeys: settings.customerKeys ?? customerKeysIn(deps.db, settings.payloadKeys),
  });
  const client = new Client({
    connection: await Connection.connect(temporalConnectionOptions(settings)),
    namespace: settings.namespace,
    dataConverter,
    ...withTracing(),
  });
  const workers = await createWorkers({
    connection,
    dataConverter,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    db: deps.db,
    logger: deps.logger,
    temporal: client,
    webhooks: deps.webhooks,
    offers: deps.offers,
    loans: deps.loans,
    files: deps.files,
    deniedDocumentRetentionMs: deps.deniedDocumentRetentionMs,
    approvals: deps.approvals,
    psp: deps.psp,
    ...(deps.reminders ? { reminders: deps.reminders } : {}),
    ...(settings.workflowBundlePath ? { workflowBundlePath: settings.workflowBundlePath } : {}),
    ...(settings.maxCachedWorkflows !== undefined
      ? { maxCachedWorkflows: settings.maxCachedWorkflows }
      : {}),
  });
  // The daily reconciliation (contract §16) compares the PSP's account with the books.
  const reconciliationTime =
    settings.reconciliationTime === undefined
      ? { hour: 0, minute: 30 }
      : settings.reconciliationTime;
  if (deps.psp && reconciliationTime)
    await ensureReconciliationSchedule(client, settings.taskQueue, reconciliationTime);
  const maintenance = startMaintenance({
    db: deps.db,
    temporal: client,
    logger: deps.logger,
    files: deps.files,
    psp: deps.psp,
    metrics: deps.metrics ?? createWorkerMetrics({ processMetrics: false }),
    intervalMs: settings.maintenanceIntervalMs,
    taskQueue: settings.taskQueue,
  });
  const running = workers.run();
  return {
    workers,
    async stop(): Promise<void> {
      await maintenance.stop();
      workers.shutdown();
      await running;
      await connection.close();
      await client.connection.close();
    },
  };
}
