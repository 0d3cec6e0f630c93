import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../../activities/index.js';
import type { Db } from '../db/client.js';
import type { Logger } from '../logger.js';
import { projectRoot } from '../project-root.js';

/** Prebuilt by `npm run build`; without it the worker bundles the TypeScript sources at start. */
export const prebuiltWorkflowBundle = join(projectRoot, 'dist', 'workflow-bundle.js');
export const workflowsSource = join(projectRoot, 'workflows', 'index.ts');

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  db: Db;
  logger: Logger;
  /** Path of a bundle made by `bundleWorkflowCode`; tests make one per run and share it. */
  workflowBundlePath?: string;
  identity?: string;
}

/** The one way a worker is built, in production, in development and in tests. */
export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  const identity = deps.identity ?? `${process.pid}@${hostname()}`;
  const bundlePath =
    deps.workflowBundlePath ??
    (existsSync(prebuiltWorkflowBundle) ? prebuiltWorkflowBundle : undefined);
  const workflows: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = bundlePath
    ? { workflowBundle: { codePath: bundlePath } }
    : { workflowsPath: workflowsSource };
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    identity,
    activities: createActivities({ db: deps.db, logger: deps.logger, identity }),
    ...workflows,
  });
}

export { NativeConnection, Runtime };
