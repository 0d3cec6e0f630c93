import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msNumberToTs } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { projectRoot } from '../../src/project-root.js';
import { namespaceRetention, parseRetention } from '../../src/temporal/retention.js';

const run = promisify(execFile);
const DAY = 86_400_000;
// A namespace of this file's own: the run's other files keep the dev server's default as it is.
const namespace = `retention-${process.pid}`;
let connection: Connection;

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msNumberToTs(DAY),
  });
});
afterAll(async () => {
  await connection?.close();
});

describe('npm run temporal:retention', () => {
  it('reads and sets how long the namespace keeps closed histories', async () => {
    const command = (...args: string[]) =>
      run(process.execPath, ['--import', 'tsx', 'src/main/temporal-retention.ts', ...args], {
        cwd: projectRoot,
        env: {
          ...process.env,
          // The worker's environment, as ops run it (where the worker runs).
          NODE_ENV: 'development',
          DATABASE_URL: inject('databaseUrl'),
          FILE_STORE: 'local',
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          TEMPORAL_NAMESPACE: namespace,
        },
      });
    expect((await command('30d')).stdout).toBe(
      `${namespace}: closed histories kept 30 days (was 1 day)\n`,
    );
    expect(await namespaceRetention(connection, namespace)).toBe(30 * DAY);
    // A retention Temporal would refuse changes nothing, and says why.
    await expect(command('6h')).rejects.toMatchObject({
      code: 2,
      stderr: '6h: Temporal keeps a closed history one day at least.\n',
    });
    expect(await namespaceRetention(connection, namespace)).toBe(30 * DAY);
  });

  it('takes durations in the ms format, from a day to ten years', () => {
    expect(parseRetention('72h')).toBe(3 * DAY);
    expect(parseRetention('3650d')).toBe(3650 * DAY);
    for (const bad of ['30', 'thirty days', '-5d', '3651d', '23h', ''])
      expect(() => parseRetention(bad), bad).toThrow();
  });
});
