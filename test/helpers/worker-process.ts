import { spawn, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';
import { createInterface } from 'node:readline';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import { formatKeyRing } from '../../src/domain/key-ring.js';
import { pspEnvOf, type TestStack } from './stack.js';

/**
 * A worker of the stack in a process of its own, as production runs it, so a test can SIGKILL it
 * mid-activity; resolved once it polls (a previous release's bundles its workflow sources first, which can take
 * longer than a request waits for a workflow). `ca` is a PEM the worker trusts for webhook
 * deliveries (a test receiver's). `root` runs the worker of another tree (a previous release's,
 * extracted by the upgrade test) from its own `src/main/worker.ts` and workflow sources; `env` adds
 * to or overrides the environment it is given. `output` receives every line it writes, on stdout
 * and on stderr.
 */
export async function spawnWorkerProcess(
  stack: TestStack,
  options: { ca?: string; root?: string; env?: Record<string, string>; output?: string[] } = {},
): Promise<ChildProcess> {
  const root = options.root ?? projectRoot;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: stack.config.databaseUrl,
    TEMPORAL_ADDRESS: stack.config.temporal.address,
    TEMPORAL_TASK_QUEUE: stack.config.temporal.taskQueue,
    // The stack's payload keys, so this process reads and writes what the stack's clients do.
    TEMPORAL_PAYLOAD_KEYS: formatKeyRing(stack.config.temporal.payloadKeys),
    PUBLIC_BASE_URL: stack.config.publicBaseUrl,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'info',
    ...inject('objectStoreEnv'),
    // The stack's account at the run's PSP simulator.
    ...pspEnvOf(stack.config),
    // Several may run at once: no metrics endpoint to contend for.
    WORKER_METRICS_PORT: '0',
    // The run's bundle of this tree's workflows, made once (a previous release bundles its own).
    ...(root === projectRoot ? { WORKFLOW_BUNDLE: inject('workflowBundlePath') } : {}),
    ...options.env,
  };
  if (options.ca) {
    const caFile = join(await mkdtemp(join(tmpdir(), 'ca-')), 'ca.pem');
    await writeFile(caFile, options.ca);
    env.WEBHOOK_CA_FILE = caFile;
  }
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/main/worker.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  createInterface({ input: child.stderr }).on('line', (line) => options.output?.push(line));
  // The last lines it logged, to say why it did not start.
  const lastLines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the worker process did not start')), 120_000);
    child.once('exit', (code) =>
      reject(new Error(`the worker process exited (${code})\n${lastLines.join('\n')}`)),
    );
    // Its log lines are read to the end, so the pipe never fills.
    createInterface({ input: child.stdout }).on('line', (line) => {
      options.output?.push(line);
      lastLines.push(line);
      if (lastLines.length > 5) lastLines.shift();
      if (line.includes('"msg":"worker running"')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return child;
}
