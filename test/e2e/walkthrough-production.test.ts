import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureDemoStaff } from '../../src/devstack/demo-staff.js';
import { projectRoot } from '../../src/project-root.js';
import { createPartner } from '../helpers/partners.js';
import { startStack, type TestStack } from '../helpers/stack.js';

/*
 * docs/walkthrough-production-psp.md as written: every `sh` block, in order, in one bash, against
 * the real service and the run's PSP simulator (this stack's account there), with the demo
 * partner's and the demo staff's files `npm run dev` keeps in `.data/`.
 */
let stack: TestStack;
let home: string;

beforeAll(async () => {
  stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1h' } });
  home = await mkdtemp(join(tmpdir(), 'walkthrough-production-'));
  for (const entry of ['package.json', 'tsconfig.json', 'src', 'node_modules'])
    await symlink(join(projectRoot, entry), join(home, entry));
  await mkdir(join(home, '.data'));
  await writeFile(
    join(home, '.data', 'demo-partner.json'),
    JSON.stringify({ name: 'Demo Partner', ...(await createPartner(stack, 'Demo Partner')) }),
  );
  await ensureDemoStaff(stack.config.databaseUrl, join(home, '.data', 'demo-staff.json'));
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

function run(script: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const bash = spawn('bash', ['-c', script], {
      cwd: home,
      env: {
        ...process.env,
        API: stack.baseUrl,
        MAIL: inject('mailpitApiUrl'),
        PSP: inject('pspSimulator').url,
        PSP_CA: inject('pspSimulator').caFile,
        DATABASE_URL: stack.config.databaseUrl,
      },
    });
    let output = '';
    bash.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    bash.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    bash.on('close', (code) => resolve({ code, output }));
  });
}

describe('the production walkthrough (the PSP)', () => {
  it('runs as written', async () => {
    const text = await readFile(join(projectRoot, 'docs', 'walkthrough-production-psp.md'), 'utf8');
    const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
    const { code, output } = await run(['set -euo pipefail', ...blocks].join('\n'));
    expect({ code, tail: code === 0 ? '' : output.slice(-3000) }).toEqual({ code: 0, tail: '' });
    if (process.env.WALKTHROUGH_PRINT) process.stdout.write(output);
    // What the document shows is what happened.
    for (const line of [
      'claimed',
      'pyt_ confirmed 300000 ana.',
      'dropped',
      'missing_notification booked_missing_notification',
      'ledger: every check holds',
    ])
      expect(output).toContain(line);
  }, 300_000);
});
