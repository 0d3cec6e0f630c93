import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import type { TestStack } from './stack.js';

/**
 * A worker of the stack in a process of its own, as production runs it, so a test can SIGKILL it
 * mid-activity. `ca` is a PEM the worker trusts for webhook deliveries (a test receiver's).
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
    LOG_LEVEL: 'silent',
  };
  if (options.ca) {
    const caFile = join(await mkdtemp(join(tmpdir(), 'ca-')), 'ca.pem');
    await writeFile(caFile, options.ca);
    env.WEBHOOK_CA_FILE = caFile;
  }
  return spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'src/main/worker.ts')], {
    cwd: projectRoot,
    env,
    stdio: 'ignore',
  });
}
