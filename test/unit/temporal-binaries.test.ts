import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ProvisioningError,
  resolveTemporalCli,
  resolveTestServer,
  TEMPORAL_CLI_VERSION,
  TEMPORAL_TEST_SERVER_VERSION,
} from '../../src/devstack/temporal-binaries.js';

const saved = { ...process.env };
let scratch: string;
const quiet = () => {};

async function fakeExecutable(path: string) {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, '#!/bin/sh\nexit 0\n');
  await chmod(path, 0o755);
}

beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'provision-test-'));
  process.env.EMBEDDED_CREDIT_CACHE_DIR = join(scratch, 'cache');
  delete process.env.TEMPORAL_CLI_PATH;
  delete process.env.TEMPORAL_TEST_SERVER_PATH;
});
afterEach(async () => {
  process.env = { ...saved };
  await rm(scratch, { recursive: true, force: true });
});

describe('resolving the Temporal binaries', () => {
  it('prefers an explicit path from the environment over the cache', async () => {
    const explicit = join(scratch, 'my-temporal');
    await fakeExecutable(explicit);
    await fakeExecutable(
      join(scratch, 'cache', `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal'),
    );
    process.env.TEMPORAL_CLI_PATH = explicit;
    const resolved = await resolveTemporalCli(quiet);
    expect(resolved.executable).toEqual({ type: 'existing-path', path: explicit });
  });

  it('refuses an explicit path that is not an executable, saying which variable', async () => {
    process.env.TEMPORAL_TEST_SERVER_PATH = join(scratch, 'missing');
    await expect(resolveTestServer(quiet)).rejects.toThrow(ProvisioningError);
    await expect(resolveTestServer(quiet)).rejects.toThrow(
      /TEMPORAL_TEST_SERVER_PATH=.*missing is not an executable/,
    );
  });

  it('uses the cached copy without building', async () => {
    const cached = join(
      scratch,
      'cache',
      `temporal-test-server-${TEMPORAL_TEST_SERVER_VERSION}`,
      'temporal-test-server',
    );
    await fakeExecutable(cached);
    process.env.PATH = ''; // a build would fail: no go, no mvn
    const resolved = await resolveTestServer(quiet);
    expect(resolved.executable).toEqual({ type: 'existing-path', path: cached });
  });

  it('falls back to the SDK download, keeping one message that lists what was tried and how to fix it', async () => {
    process.env.PATH = join(scratch, 'empty-bin'); // neither go nor mvn can be found
    const progress: string[] = [];
    const resolved = await resolveTemporalCli((line) => progress.push(line));
    expect(resolved.executable.type).toBe('cached-download');
    const message = resolved.unavailable?.message ?? '';
    expect(message).toContain('TEMPORAL_CLI_PATH: not set');
    expect(message).toContain('cache: nothing at');
    expect(message).toMatch(/go install: go could not run/);
    expect(message).toContain('SDK download');
    expect(message).toContain('set TEMPORAL_CLI_PATH');
    expect(progress.some((line) => line.includes('building Temporal CLI'))).toBe(true);
    // A failed build leaves nothing half-made in the cache.
    await expect(resolveTemporalCli(quiet)).resolves.toMatchObject({
      executable: { type: 'cached-download' },
    });
  });
});
