import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import { createPartner } from './partners.js';
import type { TestStack } from './stack.js';

/**
 * A folder of its own for what a walkthrough writes (doc.pdf, cookie jars), with what its
 * `npm run …` commands need of the repository, and the demo partner `npm run dev` keeps in
 * `.data/demo-partner.json`. `remove` deletes it.
 */
export async function walkthroughHome(
  stack: TestStack,
  name: string,
): Promise<{ home: string; remove: () => Promise<void> }> {
  const home = await mkdtemp(join(tmpdir(), `${name}-`));
  for (const entry of ['package.json', 'tsconfig.json', 'src', 'node_modules'])
    await symlink(join(projectRoot, entry), join(home, entry));
  await mkdir(join(home, '.data'));
  await writeFile(
    join(home, '.data', 'demo-partner.json'),
    JSON.stringify({ name: 'Demo Partner', ...(await createPartner(stack, 'Demo Partner')) }),
  );
  return { home, remove: () => rm(home, { recursive: true, force: true }) };
}

/**
 * A document's `sh` blocks, in order (those `keep` refuses left out), as one bash script: a
 * walkthrough under `docs/`, or another file of the repository by its path (`README.md`). With
 * `before`, only the blocks above the heading that starts with it (`## 13.`); with `from`, only
 * those from the heading that starts with it on.
 */
export async function walkthroughScript(
  document: string,
  keep: (block: string) => boolean = () => true,
  before?: string,
  from?: string,
): Promise<string> {
  const path =
    document.includes('/') || document === 'README.md' ? document : join('docs', document);
  const whole = await readFile(join(projectRoot, path), 'utf8');
  const heading = (name: string) => {
    const at = whole.indexOf(`\n${name}`);
    if (at < 0) throw new Error(`${path} has no heading ${name}`);
    return at;
  };
  const text = whole.slice(
    from === undefined ? 0 : heading(from),
    before === undefined ? undefined : heading(before),
  );
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
  return ['set -euo pipefail', ...blocks.filter(keep)].join('\n');
}

/** Runs a script in bash in `home` with `env` added: its exit code and its whole output. */
export function runScript(
  script: string,
  home: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const bash = spawn('bash', ['-c', script], { cwd: home, env: { ...process.env, ...env } });
    let output = '';
    bash.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    bash.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    bash.on('close', (code) => resolve({ code, output }));
  });
}
