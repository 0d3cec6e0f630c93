import { spawn, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';
import { createInterface } from 'node:readline';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import type { TestStack } from './stack.js';

/**
 * A worker of the stack in a process of its own, as production runs it, so a test can SIGKILL it
 * mid-activity; resolved once it polls (it bundles the workflow sources first, which can take
 * longer than a request waits for a workflow). `ca` is a PEM the worker trusts for webhook
 * deliveries (a test receiver's).
 */
export async function spawnWorkerProcess(
  stack: TestStack,
  options: { ca?: string } = {},
): Promise<ChildProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: stack.config.databaseUrl,
    TEMPORAL_ADDRESS: stack.config.temporal.address,
    TEMPORAL_TASK_QUEUE: stack.config.temporal.taskQueue,
    PUBLIC_BASE_URL: stack.config.publicBaseUrl,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'info',
    ...inject('objectStoreEnv'),
    // Several may run at once: no metrics endpoint to contend for.
    WORKER_METRICS_PORT: '0',
  };
  if (options.ca) {
    const caFile = join(await mkdtemp(join(tmpdir(), 'ca-')), 'ca.pem');
    await writeFile(caFile, options.ca);
    env.WEBHOOK_CA_FILE = caFile;
  }
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(projectRoot, 'src/main/worker.ts')],
    { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the worker process did not start')), 120_000);
    child.once('exit', (code) => reject(new Error(`the worker process exited (${code})`)));
    // Its log lines are read to the end, so the pipe never fills.
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.includes('"msg":"worker running"')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return child;
}
