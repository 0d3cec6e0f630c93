import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readManifest } from '../../src/backup/manifest.js';
import { restoreBackup } from '../../src/backup/restore.js';
import { backupTargets } from '../../src/backup/targets.js';
import { developmentAppUrl } from '../../src/db/roles.js';
import {
  startEmbeddedPostgres,
  type RunningPostgres,
} from '../../src/devstack/embedded-postgres.js';
import { freePort } from '../../src/devstack/free-port.js';
import { resolveMinioClient, startMinio, type MinioServer } from '../../src/devstack/minio.js';
import { resolvePostgresClientTools } from '../../src/devstack/postgres-client-tools.js';
import { projectRoot } from '../../src/project-root.js';
import { spawnApiProcess, type ApiProcess } from '../helpers/api-process.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

const execFileAsync = promisify(execFile);
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** `npm run backup -- <folder>` or `npm run restore -- <folder>`, as an operator runs it. */
async function run(
  command: 'backup' | 'restore',
  folder: string,
  env: Record<string, string>,
): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      ['--import', 'tsx', join(projectRoot, `src/main/${command}.ts`), folder],
      { cwd: projectRoot, env: { ...process.env, NODE_ENV: 'test', ...env }, timeout: 60_000 },
    );
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** restoreBackup as the restore command calls it, with the tools it resolves. */
async function restoreBackupWith(folder: string, env: Record<string, string>) {
  const resolved = backupTargets({ NODE_ENV: 'test', ...env });
  if (resolved.problems) throw new Error(resolved.problems.join('; '));
  const [postgres, mc] = await Promise.all([resolvePostgresClientTools(), resolveMinioClient()]);
  if (mc.executable.type !== 'existing-path') throw new Error('mc not resolved');
  return restoreBackup(
    resolved.targets,
    { postgres, mc: { path: mc.executable.path, source: mc.source } },
    folder,
    () => {},
  );
}

describe('backup and restore (npm run backup, npm run restore)', () => {
  let stack: TestStack;
  let api: Client;
  let token: string;
  let scratch: string;
  let postgres: RunningPostgres | undefined;
  let minio: MinioServer | undefined;
  let restoredApi: ApiProcess | undefined;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'embedded-credit-backup-'));
    // The fresh servers the backup is restored into start beside the stack: nothing in them yet.
    // PostgreSQL's client tools too (`npm run provision` fetched them; a first run here does).
    [stack, postgres, minio] = await Promise.all([
      startStack({ env: { SANDBOX_REVIEW_DELAY: '1h' } }),
      freePort().then((port) =>
        startEmbeddedPostgres({
          dataDir: join(scratch, 'postgres'),
          port,
          database: 'embedded_credit_restored',
          unsafeFast: true,
        }),
      ),
      startMinio({ dataDir: join(scratch, 'minio'), progress: () => {} }),
      resolvePostgresClientTools(),
    ]);
    token = await tokenFor(stack, (await createPartner(stack)).credentials.sandbox);
    api = client(stack, token);
  });
  afterAll(async () => {
    await restoredApi?.stop();
    await minio?.stop();
    await postgres?.stop();
    await stack?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('restores the records and the documents into fresh servers, where an API reads a loan and its customer’s document back', async () => {
    const loan = await activeLoan(stack, api, { opsToken: OPS_TOKEN });
    // One of the customer's KYC documents: its file is in the object store.
    const documents = await json<{ data: { id: string; sha256: string }[] }>(
      api(`/v3/customers/${loan.customer_id}/documents`),
    );
    const document = documents.data[0]!;

    // The backup, from the run's servers (the database every test file shares: a snapshot).
    const folder = join(scratch, 'backup');
    const backup = await run('backup', folder, {
      DATABASE_URL: inject('databaseUrl'),
      MIGRATION_DATABASE_URL: inject('ownerDatabaseUrl'),
      ...inject('objectStoreEnv'),
    });
    expect(backup.output).toContain(`backup in ${folder}`);
    expect(backup.code).toBe(0);
    const manifest = await readManifest(folder);
    expect(manifest.databases.map((part) => part.part)).toEqual(['application']);
    // The run's Temporal is the dev server: the backup says it holds no workflow.
    expect(manifest.temporalNotIncluded).toMatch(/SQLite/);
    expect(manifest.objectStore.objects).toBeGreaterThan(0);
    expect(manifest.service.databaseMigration.tag).toBe(manifest.service.latestMigration);
    const objectList = await readFile(join(folder, 'objects.sha256'), 'utf8');
    expect(objectList).toContain(document.sha256);

    // The restore into the fresh servers.
    const target = {
      MIGRATION_DATABASE_URL: postgres!.url,
      DATABASE_URL: developmentAppUrl(postgres!.url),
      ...minio!.env,
    };
    const restore = await run('restore', folder, target);
    expect(restore.output).toContain(`restored ${folder}`);
    expect(restore.code).toBe(0);

    // An API on the restored database and store (the same token keys: the partner's token
    // still opens its loan), reading over HTTP.
    restoredApi = await spawnApiProcess(stack, {
      env: { DATABASE_URL: target.DATABASE_URL, ...minio!.env },
    });
    const restored = client(restoredApi as Pick<TestStack, 'baseUrl'> as TestStack, token);
    const read = await json<LoanBody>(restored(`/v3/loans/${loan.id}`));
    expect(read.status).toBe('active');
    expect(read).toEqual(await json<LoanBody>(api(`/v3/loans/${loan.id}`)));
    const file = await restored(`/v3/customers/${loan.customer_id}/documents/${document.id}/file`);
    expect(file.status).toBe(200);
    expect(sha256(new Uint8Array(await file.arrayBuffer()))).toBe(document.sha256);

    // The same restore, called in the test's process (the command is proven above): a second
    // one into the same servers is refused, they are no longer empty; a backup altered after
    // the fact is refused before anything is written.
    const restoreInto = () => restoreBackupWith(folder, target);
    await expect(restoreInto()).rejects.toThrow(
      /is not empty \(\d+ relations\): a restore goes into an empty database/,
    );
    // A backup of a database migrated by a newer release is refused by this one.
    const manifestFile = join(folder, 'manifest.json');
    const manifestText = await readFile(manifestFile, 'utf8');
    await writeFile(
      manifestFile,
      JSON.stringify({
        ...manifest,
        service: {
          ...manifest.service,
          databaseMigration: { createdAt: Date.now() + 86_400_000, tag: null },
        },
      }),
    );
    await expect(restoreInto()).rejects.toThrow(/has migrations this release does not ship/);
    await writeFile(manifestFile, manifestText);

    const objectKey = objectList
      .split('\n')
      .find((line) => line.startsWith(document.sha256))!
      .slice(66);
    await writeFile(join(folder, 'objects', objectKey), 'not the document');
    await expect(restoreInto()).rejects.toThrow(
      `the backup does not match its manifest.json; nothing was restored:\n  - object ${objectKey}: missing or changed`,
    );
  });
});
