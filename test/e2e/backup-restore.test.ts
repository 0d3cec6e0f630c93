import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import postgresClient from 'postgres';
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
import {
  createBucket,
  resolveMinioClient,
  startMinio,
  type MinioServer,
} from '../../src/devstack/minio.js';
import { resolvePostgresClientTools } from '../../src/devstack/postgres-client-tools.js';
import { projectRoot } from '../../src/project-root.js';
import { spawnApiProcess, type ApiProcess } from '../helpers/api-process.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import { registerCustomer } from '../helpers/customers.js';
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

  it('with Temporal on PostgreSQL: its two databases dumped first and restored beside the application, the workflow starts after its snapshot handed back to the sweeper', async () => {
    // TEMPORAL_DATABASE_URL and TEMPORAL_VISIBILITY_DATABASE_URL name Temporal's databases; the
    // backup and the restore move them whole (pg_dump, pg_restore), whatever their schema. The
    // run's Temporal is the dev server (SQLite), so two databases of the run's PostgreSQL with
    // rows of their own stand for them here: what is tested is the commands' handling of them.
    const suffix = randomBytes(4).toString('hex');
    const databaseOn = (serverUrl: string, name: string) => {
      const url = new URL(serverUrl);
      url.pathname = `/${name}`;
      return url.toString();
    };
    const withSql = async <T>(url: string, work: (sql: postgresClient.Sql) => Promise<T>) => {
      const sql = postgresClient(url, { max: 1, onnotice: () => {} });
      try {
        return await work(sql);
      } finally {
        await sql.end({ timeout: 5 });
      }
    };
    const createDatabases = (serverUrl: string, names: string[]) =>
      withSql(serverUrl, async (sql) => {
        for (const name of names) await sql.unsafe(`create database "${name}"`);
      });
    const sourceServer = inject('ownerDatabaseUrl');
    const source = {
      TEMPORAL_DATABASE_URL: databaseOn(sourceServer, `temporal_${suffix}`),
      TEMPORAL_VISIBILITY_DATABASE_URL: databaseOn(sourceServer, `temporal_visibility_${suffix}`),
    };
    await createDatabases(sourceServer, [`temporal_${suffix}`, `temporal_visibility_${suffix}`]);
    for (const [url, table] of [
      [source.TEMPORAL_DATABASE_URL, 'executions'],
      [source.TEMPORAL_VISIBILITY_DATABASE_URL, 'executions_visibility'],
    ] as const)
      await withSql(url, async (sql) => {
        await sql.unsafe(`create table ${table} (workflow_id text primary key, state text)`);
        await sql.unsafe(`insert into ${table} values ('loan/ln_${suffix}', 'running')`);
      });
    // A workflow the API starts just before the backup: after Temporal's snapshot (within its
    // clock margin), so the restore hands its start back to the sweeper.
    const customer = await registerCustomer(api);
    const started = async () =>
      withSql(
        inject('ownerDatabaseUrl'),
        (sql) => sql<{ started_at: Date | null }[]>`
          select started_at from workflow_outbox
          where workflow_id = ${`customer-onboarding/${customer.id}`}`,
      );
    for (let tries = 0; (await started())[0]?.started_at == null; tries += 1) {
      if (tries > 100) throw new Error('the onboarding workflow was never started');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const folder = join(scratch, 'backup-with-temporal');
    const backup = await run('backup', folder, {
      DATABASE_URL: inject('databaseUrl'),
      MIGRATION_DATABASE_URL: inject('ownerDatabaseUrl'),
      ...inject('objectStoreEnv'),
      ...source,
    });
    expect(backup.code).toBe(0);
    const manifest = await readManifest(folder);
    // Temporal's first: the application's snapshot is the newer, and the restore redrives from it.
    expect(manifest.databases.map((part) => part.part)).toEqual([
      'temporal',
      'temporal_visibility',
      'application',
    ]);
    expect(manifest.temporalNotIncluded).toBeUndefined();

    // Into empty databases of the fresh server and an empty bucket of the fresh store.
    await createDatabases(postgres!.url, [
      'restored_with_temporal',
      'temporal_restored',
      'temporal_visibility_restored',
    ]);
    await createBucket(minio!.endpoint, 'restored-with-temporal');
    const owner = databaseOn(postgres!.url, 'restored_with_temporal');
    const target = {
      MIGRATION_DATABASE_URL: owner,
      DATABASE_URL: developmentAppUrl(owner),
      ...minio!.env,
      S3_BUCKET: 'restored-with-temporal',
      AWS_ACCESS_KEY_ID: minio!.root.accessKeyId,
      AWS_SECRET_ACCESS_KEY: minio!.root.secretAccessKey,
    };
    // Temporal's backup without Temporal's targets is refused before anything is written.
    const refused = await run('restore', folder, target);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain("this backup holds Temporal's databases");
    const restored = {
      TEMPORAL_DATABASE_URL: databaseOn(postgres!.url, 'temporal_restored'),
      TEMPORAL_VISIBILITY_DATABASE_URL: databaseOn(postgres!.url, 'temporal_visibility_restored'),
    };
    const restore = await run('restore', folder, { ...target, ...restored });
    expect(restore.code).toBe(0);
    expect(restore.output).toMatch(/workflow starts handed back to the sweeper: [1-9]\d*;/);

    for (const [url, table] of [
      [restored.TEMPORAL_DATABASE_URL, 'executions'],
      [restored.TEMPORAL_VISIBILITY_DATABASE_URL, 'executions_visibility'],
    ] as const)
      expect(await withSql(url, (sql) => sql.unsafe(`select * from ${table}`))).toEqual([
        { workflow_id: `loan/ln_${suffix}`, state: 'running' },
      ]);
    const handedBack = await withSql(
      owner,
      (sql) => sql<{ started_at: Date | null }[]>`
        select started_at from workflow_outbox
        where workflow_id = ${`customer-onboarding/${customer.id}`}`,
    );
    expect(handedBack).toEqual([{ started_at: null }]);
    await withSql(sourceServer, async (sql) => {
      for (const name of [`temporal_${suffix}`, `temporal_visibility_${suffix}`])
        await sql.unsafe(`drop database "${name}"`);
    });
  });
});
