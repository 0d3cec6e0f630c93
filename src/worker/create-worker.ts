import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import {
  bundleWorkflowCode,
  NativeConnection,
  Runtime,
  Worker,
  type WorkerOptions,
} from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities/index.js';
import type { Db } from '../db/client.js';
import type { Logger } from '../logger.js';
import { projectRoot } from '../project-root.js';
import { deliveryTaskQueue } from '../temporal/task-queues.js';
import { heartbeatWhileRunning } from './heartbeats.js';
import { temporalLogger } from './temporal-logger.js';

/** Prebuilt by `npm run build` for production workers; development and tests bundle the sources. */
export const prebuiltWorkflowBundle = join(projectRoot, 'dist', 'workflow-bundle.js');
export const workflowsSource = join(projectRoot, 'workflows', 'index.ts');

export interface WorkerDeps {
  connection: NativeConnection;
  /** The payload codec's (src/temporal/payload-codec.ts): required, so no worker runs without it. */
  dataConverter: DataConverter;
  namespace: string;
  taskQueue: string;
  db: Db;
  /** For activities that start workflows after their writes (webhook deliveries). */
  temporal: Client;
  webhooks: ActivityDeps['webhooks'];
  offers: ActivityDeps['offers'];
  loans: ActivityDeps['loans'];
  files: ActivityDeps['files'];
  deniedDocumentRetentionMs: number;
  approvals: ActivityDeps['approvals'];
  psp: ActivityDeps['psp'];
  logger: Logger;
  /**
   * Path of a bundle made by `bundleWorkflowCode` (production: the prebuilt one; tests: one per
   * run). Without it the workflow sources are bundled at start, so a worker never runs stale code.
   */
  workflowBundlePath?: string;
  /**
   * Workflows kept in memory between their tasks. Most of ours wait for days (a review, an offer's
   * expiry, a due date), so the SDK's default, sized from the heap, lets a worker grow with every
   * waiting customer; past this many, the least recently used is evicted and replayed from its
   * history when its next task comes. Each queue's worker has this bound.
   */
  maxCachedWorkflows?: number;
  identity?: string;
}

/** The longest gap between two heartbeats of an attempt sent to the server (src/worker/heartbeats.ts). */
const HEARTBEAT_THROTTLE = '3 seconds';

/** The workers of one process: one per task queue, run and shut down together. */
export interface Workers {
  /** The service's queue (`taskQueue`) and the webhook deliveries' (`deliveryTaskQueue`). */
  readonly all: readonly Worker[];
  /** Runs every worker; settles when all have stopped, rejects when one fails. */
  run(): Promise<void>;
  /** Asks every worker to drain its tasks and stop. */
  shutdown(): void;
}

/**
 * The one way workers are built, in production, in development and in tests: one on the service's
 * task queue, one on the webhook deliveries' (src/temporal/task-queues.ts), the same workflow code
 * and activities in both. A delivery started before the deliveries had their queue ends on the
 * service's, which runs every workflow too.
 */
export async function createWorkers(deps: WorkerDeps): Promise<Workers> {
  const identity = deps.identity ?? `${process.pid}@${hostname()}`;
  // Bundled once for both: the prebuilt bundle, or the sources bundled now.
  const workflowBundle: WorkerOptions['workflowBundle'] = deps.workflowBundlePath
    ? { codePath: deps.workflowBundlePath }
    : await bundleWorkflowCode({
        workflowsPath: workflowsSource,
        logger: temporalLogger(deps.logger),
      });
  const activities = createActivities({
    db: deps.db,
    logger: deps.logger,
    identity,
    temporal: deps.temporal,
    taskQueue: deps.taskQueue,
    webhooks: deps.webhooks,
    offers: deps.offers,
    loans: deps.loans,
    files: deps.files,
    deniedDocumentRetentionMs: deps.deniedDocumentRetentionMs,
    approvals: deps.approvals,
    psp: deps.psp,
  });
  const create = (taskQueue: string) =>
    Worker.create({
      connection: deps.connection,
      dataConverter: deps.dataConverter,
      namespace: deps.namespace,
      taskQueue,
      identity,
      activities,
      workflowBundle,
      interceptors: { activity: [heartbeatWhileRunning] },
      // Heartbeats reach the server every 3 s at most (the SDK's default would wait 80 % of the
      // 10 s timeout, 2 s from giving a live but busy worker's attempt up).
      maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
      ...(deps.maxCachedWorkflows !== undefined
        ? { maxCachedWorkflows: deps.maxCachedWorkflows }
        : {}),
    });
  const all = [await create(deps.taskQueue), await create(deliveryTaskQueue(deps.taskQueue))];
  return {
    all,
    async run() {
      // One failing stops the others: a process half polling is worse than one restarted.
      const runs = all.map((worker) => worker.run());
      try {
        await Promise.all(runs);
      } catch (error) {
        for (const worker of all) if (worker.getState() === 'RUNNING') worker.shutdown();
        await Promise.allSettled(runs);
        throw error;
      }
    },
    shutdown() {
      for (const worker of all) if (worker.getState() === 'RUNNING') worker.shutdown();
    },
  };
}

export { NativeConnection, Runtime };
