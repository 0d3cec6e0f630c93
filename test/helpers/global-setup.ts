import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EphemeralServerExecutable } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { SANDBOX_LENDER, SANDBOX_PIX_KEY } from '../../src/config.js';
import { createDatabase } from '../../src/db/client.js';
import { ledgerCheckReport } from '../../src/db/queries/ledger.js';
import { migrateForApplication } from '../../src/devstack/database-roles.js';
import { startEmbeddedPostgres } from '../../src/devstack/embedded-postgres.js';
import { resolveMailpit, startMailpit } from '../../src/devstack/mailpit.js';
import { resolveMinioClient, startMinio } from '../../src/devstack/minio.js';
import { makePki } from '../../src/devstack/pki.js';
import { startPspSimulator, type PspSimulator } from '../../src/devstack/psp-simulator/index.js';
import { resolveTemporalCli, resolveTestServer } from '../../src/devstack/temporal-binaries.js';
import { startTemporalDevServer } from '../../src/devstack/temporal-dev-server.js';
import { workflowInterceptorModules, workflowsSource } from '../../src/worker/create-worker.js';
import { freePort } from '../../src/devstack/free-port.js';
import { seedStaff, type SeededStaff } from './seed-staff.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The application role's (rows only, no DDL): what the API and the worker connect with. */
    databaseUrl: string;
    /** The owner's (the server's superuser, which migrated): for tests that need more than rows. */
    ownerDatabaseUrl: string;
    temporalAddress: string;
    workflowBundlePath: string;
    testServerExecutable: EphemeralServerExecutable;
    /** S3_* and AWS_* of the run's MinIO: its application user's, limited to the bucket. */
    objectStoreEnv: Record<string, string>;
    /** The run's Mailpit: SMTP_URL of the stacks, and the HTTP API test/helpers/mailbox.ts reads. */
    smtpUrl: string;
    mailpitApiUrl: string;
    /** The run's seeded administrators and money desk (test/helpers/seed-staff.ts). */
    staff: SeededStaff;
    /**
     * The run's PSP simulator: its PSP_API_URL and the PEM files of its CA and of the client
     * certificate it trusts. Each stack registers an account of its own there, with its own
     * credentials and notification URLs (test/helpers/stack.ts).
     */
    pspSimulator: { url: string; caFile: string; clientCertFile: string; clientKeyFile: string };
  }
}

/**
 * Starts the servers every test file shares, once per run: a fresh embedded PostgreSQL with the
 * migrations applied by its superuser and the application role granted rows only (the API and
 * the worker connect as it, so the suite proves they need no DDL), a Temporal dev server (the real server, headless, in memory), MinIO with
 * the bucket created, Mailpit (the SMTP server whose mailbox the tests read), the PSP simulator
 * (one for every file: each stack is an account of its own there) and one workflow bundle.
 * Time-skipping servers are per file: skipping time is global to a server.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string) => process.stderr.write(`[test setup] ${line}\n`);
  // Resolved together, so first-run builds overlap.
  const [cli, testServer] = await Promise.all([
    resolveTemporalCli(log),
    resolveTestServer(log),
    resolveMailpit(log),
    resolveMinioClient(log),
  ]);

  const scratch = await mkdtemp(join(tmpdir(), 'embedded-credit-test-'));
  const postgres = await startEmbeddedPostgres({
    dataDir: join(scratch, 'postgres'),
    port: await freePort(),
    database: 'embedded_credit_test',
    unsafeFast: true,
  });
  const temporal = await startTemporalDevServer({ cli, port: await freePort() }).catch(
    async (error: unknown) => {
      await postgres.stop();
      throw error;
    },
  );
  const minio = await startMinio({ dataDir: join(scratch, 'minio'), progress: log }).catch(
    async (error: unknown) => {
      await temporal.teardown();
      await postgres.stop();
      throw error;
    },
  );
  const mailpit = await startMailpit({ progress: log }).catch(async (error: unknown) => {
    await minio.stop();
    await temporal.teardown();
    await postgres.stop();
    throw error;
  });

  let databaseUrl: string;
  let psp: PspSimulator | undefined;
  let starting: Promise<PspSimulator> | undefined;
  try {
    // The simulator starts while the database migrates.
    const pki = makePki(join(scratch, 'psp-pki'));
    const pspStarted = Date.now();
    starting = startPspSimulator({
      port: 0,
      stateFile: join(scratch, 'psp-simulator', 'state.json'),
      tlsFiles: { cert: pki.server.certFile, key: pki.server.keyFile, ca: pki.ca.certFile },
      // Nobody's: every stack authenticates as an account it registers.
      client: { id: 'test-run', secret: randomBytes(24).toString('hex') },
      receiver: {
        pixKey: SANDBOX_PIX_KEY,
        name: SANDBOX_LENDER.LENDER_NAME,
        cnpj: SANDBOX_LENDER.LENDER_CNPJ,
        city: 'SAO PAULO',
        uf: 'SP',
        cep: '01310100',
        logradouro: 'Avenida Paulista, 1000',
      },
    }).then((started) => {
      psp = started;
      log(`PSP simulator listening in ${Date.now() - pspStarted} ms`);
      return started;
    });
    starting.catch(() => {}); // awaited below; a failure meanwhile is not unhandled
    databaseUrl = await migrateForApplication(postgres.url);
    const simulator = await starting;
    const staff = await seedStaff(databaseUrl);
    const { code } = await bundleWorkflowCode({
      workflowsPath: workflowsSource,
      workflowInterceptorModules,
      logger: quietBundlerLogger,
    });
    const workflowBundlePath = join(scratch, 'workflow-bundle.js');
    await writeFile(workflowBundlePath, code);

    project.provide('databaseUrl', databaseUrl);
    project.provide('ownerDatabaseUrl', postgres.url);
    project.provide('temporalAddress', temporal.address);
    project.provide('workflowBundlePath', workflowBundlePath);
    project.provide('testServerExecutable', testServer.executable);
    project.provide('objectStoreEnv', minio.env);
    project.provide('smtpUrl', mailpit.smtpUrl);
    project.provide('mailpitApiUrl', mailpit.apiUrl);
    project.provide('staff', staff);
    project.provide('pspSimulator', {
      url: simulator.url,
      caFile: pki.ca.certFile,
      clientCertFile: pki.client.certFile,
      clientKeyFile: pki.client.keyFile,
    });
  } catch (error) {
    await (await starting?.catch(() => undefined))?.stop();
    await mailpit.stop();
    await minio.stop();
    await temporal.teardown();
    await postgres.stop();
    throw error;
  }

  return async () => {
    // What `npm run ledger:check` says of everything the run booked: every file's money together.
    const database = createDatabase(databaseUrl, { max: 1 });
    const ledger = await ledgerCheckReport(database.db).finally(() => database.close());
    log(`ledger:check after the run: ${ledger.lines.join('; ')}`);
    await psp?.stop();
    await mailpit.stop();
    await minio.stop();
    await temporal.teardown();
    await postgres.stop();
    await rm(scratch, { recursive: true, force: true });
    if (!ledger.ok)
      throw new Error(`the ledger does not reconcile after the run: ${ledger.lines.join('; ')}`);
  };
}

const quietBundlerLogger = {
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string) => process.stderr.write(`[bundler] ${message}\n`),
  error: (message: string) => process.stderr.write(`[bundler] ${message}\n`),
  log: () => {},
};
