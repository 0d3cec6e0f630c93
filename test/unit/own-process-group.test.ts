import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SUPERVISOR_MARKER } from '../../src/devstack/own-process-group.js';
import { projectRoot } from '../../src/project-root.js';

/**
 * Ctrl-C under `npm run dev` (issue 42): the terminal signals its whole foreground process group,
 * and the servers the supervisor started stopped before the worker that used them. The fixture is
 * a supervisor with one server; the test plays the terminal, SIGINT to the group it started.
 */
const fixture = join(projectRoot, 'test/fixtures/process-group-supervisor.ts');

async function pressCtrlC(env: NodeJS.ProcessEnv): Promise<string[]> {
  // Its own group, as a terminal's foreground job.
  const job = spawn(process.execPath, ['--import', 'tsx', fixture], {
    cwd: projectRoot,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  let out = '';
  job.stdout.setEncoding('utf8');
  const exited = new Promise<number | null>((resolve) => job.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${out}`)), 20_000);
    job.stdout.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('server up')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  process.kill(-job.pid!, 'SIGINT');
  expect(await exited).toBe(0);
  // The stdout pipe closes after the last process writing to it exits.
  await new Promise((resolve) =>
    job.stdout.readableEnded ? resolve(null) : job.stdout.once('end', resolve),
  );
  return out.trim().split('\n');
}

describe('a supervisor in a process group of its own', () => {
  it('alone receives Ctrl-C, and stops its server itself', async () => {
    const { [SUPERVISOR_MARKER]: _, ...env } = process.env;
    expect(await pressCtrlC(env)).toEqual([
      'server up',
      'supervisor stopping',
      'server got SIGTERM',
      'supervisor stopped',
    ]);
  });

  it("(the control) shares the terminal's group without the relay, and its server gets Ctrl-C first", async () => {
    const lines = await pressCtrlC({ ...process.env, [SUPERVISOR_MARKER]: '1' });
    expect(lines).toContain('server got SIGINT');
    expect(lines).not.toContain('server got SIGTERM');
  });
});
