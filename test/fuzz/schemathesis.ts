import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheDirectory } from '../../src/devstack/temporal-binaries.js';

/** Pinned: a new Schemathesis generates other cases and checks other things; move on purpose. */
export const SCHEMATHESIS_VERSION = '4.32.5';

/**
 * The `st` executable of Schemathesis, installed from PyPI into a virtual environment in the user
 * cache (`~/.cache/embedded-credit/schemathesis-<version>`) on first use and reused after. A
 * marker file written last tells a finished install from an interrupted one, which is redone.
 */
export async function ensureSchemathesis(progress: (line: string) => void): Promise<string> {
  const folder = join(cacheDirectory(), `schemathesis-${SCHEMATHESIS_VERSION}`);
  const executable = join(folder, 'bin', 'st');
  const marker = join(folder, '.installed');
  if (existsSync(marker) && existsSync(executable)) return executable;

  const python = process.env.PYTHON ?? 'python3';
  progress(`installing Schemathesis ${SCHEMATHESIS_VERSION} into ${folder} (once)…`);
  await rm(folder, { recursive: true, force: true });
  await run(python, ['-m', 'venv', folder], `${python} -m venv (Python 3.9 or later is needed)`);
  await run(
    join(folder, 'bin', 'python'),
    [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      `schemathesis==${SCHEMATHESIS_VERSION}`,
    ],
    'pip install schemathesis',
  );
  await writeFile(marker, `${SCHEMATHESIS_VERSION}\n`);
  return executable;
}

function run(command: string, args: string[], what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', (error) => reject(new Error(`${what} could not start: ${error.message}`)));
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${what} exited with ${code}`)),
    );
  });
}
