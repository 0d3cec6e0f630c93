import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities/index.js';
import type { Db } from '../db/client.js';
import type { Logger } from '../logger.js';
import { projectRoot } from '../project-root.js';

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
  logger: Logger;
  /**
   * Path of a bundle made by `bundleWorkflowCode` (production: the prebuilt one; tests: one per
   * run). Without it the worker bundles the workflow sources, so it can never run stale code.
   */
  workflowBundlePath?: string;
  /**
   * Workflows kept in memory between their tasks. Most of ours wait for days (a review, an offer's
   * expiry, a due date), so the SDK's default, sized from the heap, lets a worker grow with every
   * waiting customer; past this many, the least recently used is evicted and replayed from its
   * history when its next task comes.
   */
  maxCachedWorkflows?: number;
  identity?: string;
}

/** The one way a worker is built, in production, in development and in tests. */
export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  const identity = deps.identity ?? `${process.pid}@${hostname()}`;
  const workflows: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = deps.workflowBundlePath
    ? { workflowBundle: { codePath: deps.workflowBundlePath } }
    : { workflowsPath: workflowsSource };
  return Worker.create({
    connection: deps.connection,
    dataConverter: deps.dataConverter,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    identity,
    activities: createActivities({
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
    }),
    ...workflows,
    ...(deps.maxCachedWorkflows !== undefined
      ? { maxCachedWorkflows: deps.maxCachedWorkflows }
      : {}),
  });
}

export { NativeConnection, Runtime };
