import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { inject } from 'vitest';
import { freePort } from '../../src/devstack/free-port.js';
import { projectRoot } from '../../src/project-root.js';
import { formatKeyRing } from '../../src/domain/key-ring.js';
import { OPS_TOKEN, pspEnvOf, type TestStack } from './stack.js';

export interface ApiProcess {
  /** Where it listens; pass `{ baseUrl }` wherever a helper takes a stack. */
  baseUrl: string;
  child: ChildProcess;
  /** SIGTERM, then waits for it to exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
}

/**
 * A second API of the stack in a process of its own, as production runs several: `src/main/api.ts`
 * under tsx on the stack's database, Temporal server and task queue, with the stack's issuer
 * (`PUBLIC_BASE_URL`), so a token from either API is good at the other, and nothing in memory
 * shared with the test's own API. Resolved once it listens. `env` adds to or overrides its
 * environment (give it the same limits as the stack's); `root` runs the API of another tree (a
 * previous release's, test/e2e/upgrade.test.ts).
 */
export async function spawnApiProcess(
  stack: TestStack,
  options: { env?: Record<string, string>; root?: string } = {},
): Promise<ApiProcess> {
  const root = options.root ?? projectRoot;
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    PORT: String(port),
    DATABASE_URL: stack.config.databaseUrl,
    DATABASE_POOL_SIZE: '5',
    TEMPORAL_ADDRESS: stack.config.temporal.address,
    TEMPORAL_TASK_QUEUE: stack.config.temporal.taskQueue,
    // The stack's payload keys, so this process reads and writes what the stack's clients do.
    TEMPORAL_PAYLOAD_KEYS: formatKeyRing(stack.config.temporal.payloadKeys),
    PUBLIC_BASE_URL: stack.config.publicBaseUrl,
    OPS_TOKEN,
    SMTP_URL: inject('smtpUrl'),
    ...inject('objectStoreEnv'),
    // The stack's account at the run's PSP simulator.
    ...pspEnvOf(stack.config),
    LOG_LEVEL: 'info',
    ...options.env,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/main/api.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A test process that dies leaves no API behind.
  const orphanGuard = () => child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The last lines it wrote, to say why it did not start; both pipes read to the end.
  const lastLines: string[] = [];
  const keep = (line: string) => {
    lastLines.push(line);
    if (lastLines.length > 10) lastLines.shift();
  };
  createInterface({ input: child.stderr }).on('line', keep);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the API process did not start')), 60_000);
    child.once('exit', (code) =>
      reject(new Error(`the API process exited (${code})\n${lastLines.join('\n')}`)),
    );
    createInterface({ input: child.stdout }).on('line', (line) => {
      keep(line);
      if (line.includes('"msg":"api listening"')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    child,
    async stop() {
      process.off('exit', orphanGuard);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
