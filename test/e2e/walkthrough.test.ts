import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { projectRoot } from '../../src/project-root.js';
import { createPartner } from '../helpers/partners.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

/*
 * docs/walkthrough-sandbox-customer.md as written: every `sh` block, in order, in one bash,
 * against the real service — twice in a row on the same data, as a partner's developer would
 * run it. The stack is configured as `npm run dev` configures the service; the walkthrough reads
 * the demo partner's credentials from `.data/demo-partner.json`, as under `npm run dev`.
 */
let stack: TestStack;
let home: string;

beforeAll(async () => {
  stack = await startStack({
    env: {
      // The defaults `npm run dev` runs with (the walkthrough's waits count on them).
      SANDBOX_REVIEW_DELAY: '10s',
      SANDBOX_DISBURSEMENT_DELAY: '30s',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true',
    },
  });
  // A folder of its own for what the walkthrough writes (doc.pdf, cookie jars), with what its
  // `npm run ledger:check` needs of the repository.
  home = await mkdtemp(join(tmpdir(), 'walkthrough-'));
  for (const entry of ['package.json', 'tsconfig.json', 'src', 'node_modules'])
    await symlink(join(projectRoot, entry), join(home, entry));
  await mkdir(join(home, '.data'));
  await writeFile(
    join(home, '.data', 'demo-partner.json'),
    JSON.stringify({ name: 'Demo Partner', ...(await createPartner(stack, 'Demo Partner')) }),
  );
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

/** The walkthrough's shell blocks, but the last section's receiver (a port of its own). */
async function walkthroughScript(): Promise<string> {
  const text = await readFile(join(projectRoot, 'docs', 'walkthrough-sandbox-customer.md'), 'utf8');
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const kept = blocks.filter((block) => !block.includes('node receiver.mjs'));
  return ['set -euo pipefail', ...kept].join('\n');
}

function run(script: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const bash = spawn('bash', ['-c', script], {
      cwd: home,
      env: {
        ...process.env,
        API: stack.baseUrl,
        MAIL: `${inject('mailpitApiUrl')}`,
        OPS_TOKEN,
        DATABASE_URL: stack.config.databaseUrl,
      },
    });
    let output = '';
    bash.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    bash.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    bash.on('close', (code) => resolve({ code, output }));
  });
}

describe('the sandbox walkthrough', () => {
  it('runs as written, twice in a row on the same data', async () => {
    const script = await walkthroughScript();
    for (const round of [1, 2]) {
      const { code, output } = await run(script);
      expect({ round, code, tail: code === 0 ? '' : output.slice(-3000) }).toEqual({
        round,
        code: 0,
        tail: '',
      });
    }
  }, 900_000);
});
