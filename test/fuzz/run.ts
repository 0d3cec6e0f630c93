/**
 * `npm run fuzz`: Schemathesis over the partner and PSP OpenAPI documents, against the real service.
 *
 * Starts what the tests start — a fresh embedded PostgreSQL, the Temporal dev server, a worker and
 * the API (both in this process) — creates a partner through the ops API, exchanges its sandbox
 * credential for a token, and runs Schemathesis (pinned, from PyPI, in a virtual environment in
 * the user cache) with a fixed seed, every phase and every check. Any finding fails the run.
 *
 * Left out: `DELETE /v3/auth/credentials/{client_id}` (the fuzzer would revoke its own token).
 * Settings are in test/fuzz/schemathesis.toml, data strategies in test/fuzz/hooks.py; arguments
 * after `--` go to `st run` (`npm run fuzz -- --include-operation-id=createCustomer`), and
 * `npm run fuzz -- --serve` only starts the stack, to reproduce a finding by hand.
 * Every TCP connection this process opens goes to the loopback only: the fuzzer's webhook
 * endpoints point wherever it likes, and their deliveries must not leave the machine.
 *
 * FUZZ_MAX_EXAMPLES (default 10; `npm test` runs within its 10 minutes with it) bounds the cases per operation of the fuzzing phase; FUZZ_SEED
 * (default 1) seeds the run; FUZZ_LOG_LEVEL (default warn) sets the service log's (`info` logs every
 * request with its duration). Reports and the service's log go to `.data/fuzz/`.
 */
import { pspClientFor } from '../../src/psp/client.js';
import { signingUrls } from '../../src/domain/loans/signing-token.js';
import { acceptanceUrls } from '../../src/domain/loans/acceptance-token.js';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';
import { createApp } from '../../src/app.js';
import { loadConfig, pixPayee } from '../../src/config.js';
import { createDatabase } from '../../src/db/client.js';
import { createMailer } from '../../src/mail/mailer.js';
import { createFileStore } from '../../src/storage/create-file-store.js';
import { migrateForApplication } from '../../src/devstack/database-roles.js';
import { startMinio } from '../../src/devstack/minio.js';
import { startEmbeddedPostgres } from '../../src/devstack/embedded-postgres.js';
import { resolveTemporalCli } from '../../src/devstack/temporal-binaries.js';
import { startTemporalDevServer } from '../../src/devstack/temporal-dev-server.js';
import { createSealedBox } from '../../src/domain/sealed-box.js';
import { createHttpMetrics } from '../../src/http/metrics.js';
import { createLogger } from '../../src/logger.js';
import { projectRoot } from '../../src/project-root.js';
import { startWorker } from '../../src/worker/start-worker.js';
import { connectionSecurity } from '../../src/temporal/client.js';
import { customerKeysIn } from '../../src/temporal/customer-keys.js';
import { payloadDataConverter } from '../../src/temporal/payload-codec.js';
import { freePort } from '../../src/devstack/free-port.js';
import { allowLoopbackConnectionsOnly } from './loopback-only.js';
import { ensureSchemathesis, SCHEMATHESIS_VERSION } from './schemathesis.js';

const MAX_EXAMPLES = Number(process.env.FUZZ_MAX_EXAMPLES ?? 10);
const SEED = Number(process.env.FUZZ_SEED ?? 1);
const OPS_TOKEN = 'fuzz-ops-token-0123456789';
/**
 * The ops operations the fuzzer covers: the PSP's money, as ops see and move it (issue 38's), and
 * the assignments of loans to a buyer (issue 41's).
 */
const OPS_OPERATIONS = [
  'getReconciliation',
  'runReconciliation',
  'requestLoanDevolucao',
  'listLoanDevolucoes',
  'listDevolucoes',
  'getLoanPayout',
  'createAssignment',
  'listAssignments',
  'getAssignment',
  'submitAssignment',
  'settleAssignment',
  'cancelAssignment',
  'getAssignmentRemittances',
  'receiveAssignmentPrice',
  'payAssignmentRemittance',
  'getAssignmentInstallments',
];
const serveOnly = process.argv.includes('--serve');

const say = (line: string) => process.stdout.write(`[fuzz] ${line}\n`);
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

const started = Date.now();
Runtime.install({ logger: new DefaultLogger('WARN') });
const [st, cli] = await Promise.all([ensureSchemathesis(say), resolveTemporalCli(say)]);
allowLoopbackConnectionsOnly();

const outputDir = join(projectRoot, '.data', 'fuzz');
const fuzzDir = join(projectRoot, 'test', 'fuzz');
await rm(outputDir, { recursive: true, force: true });
await mkdir(outputDir, { recursive: true });
const scratch = await mkdtemp(join(tmpdir(), 'embedded-credit-fuzz-'));
const stops: (() => Promise<void>)[] = [];
let exitCode = 1;

try {
  say('starting PostgreSQL, the Temporal dev server, MinIO, a worker and the API…');
  const postgres = await startEmbeddedPostgres({
    dataDir: join(scratch, 'postgres'),
    port: await freePort(),
    database: 'embedded_credit_fuzz',
    unsafeFast: true,
  });
  stops.push(() => postgres.stop());
  const temporalServer = await startTemporalDevServer({ cli, port: await freePort() });
  stops.push(() => temporalServer.teardown());
  const minio = await startMinio({ dataDir: join(scratch, 'minio') });
  stops.push(() => minio.stop());
  // Migrated as the owner; the service under test connects as the application role (rows only).
  const databaseUrl = await migrateForApplication(postgres.url);

  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalServer.address,
    OPS_TOKEN,
    LOG_LEVEL: process.env.FUZZ_LOG_LEVEL ?? 'warn',
    PORT: String(port),
    PUBLIC_BASE_URL: baseUrl,
    ...minio.env,
    OUTBOX_SWEEP_INTERVAL: '1s',
    SANDBOX_REVIEW_DELAY: '2s',
    // The fuzzer is one client sending as fast as it can: limits would only answer 429s.
    RATE_LIMIT_PER_SECOND: '100000',
    RATE_LIMIT_BURST: '100000',
    TOKEN_FAILURE_LIMIT: '100000',
    // `npm test` runs the fuzzer at the lowest priority beside Vitest: an answer may wait on the
    // CPU for seconds, and latency is not what it tests (a request's budget would answer 503).
    REQUEST_TIMEOUT: '60s',
  });
  const logFile = join(outputDir, 'service.log');
  const logger = createLogger(
    config.logLevel,
    'fuzz',
    pino.destination({ dest: logFile, sync: true }),
  );

  const workerDatabase = createDatabase(config.databaseUrl, { max: 5 });
  const worker = await startWorker(
    {
      ...config.temporal,
      maintenanceIntervalMs: config.outboxSweepIntervalMs,
    },
    {
      db: workerDatabase.db,
      logger,
      files: createFileStore(config.fileStore),
      deniedDocumentRetentionMs: config.retention.deniedDocumentsMs,
      approvals: {
        decisionKeys: config.keys.approvalDecision,
        mailer: createMailer({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, logger }),
      },
      psp: config.psp && pspClientFor(config.psp),
      loans: {
        signingUrl: signingUrls(config.publicBaseUrl, config.keys.signingLink),
        agreementAcceptanceUrl: acceptanceUrls(config.publicBaseUrl, config.keys.signingLink),
        iof: config.iof,
        pix: pixPayee(config),
      },
      webhooks: {
        sealedBox: createSealedBox(config.keys.dataEncryption),
        allowPrivateTargets: false,
        allowedPorts: config.webhookAllowedPorts,
      },
      offers: { validityMs: config.offerValidityMs, renewalDelayMs: config.offerRenewalDelayMs },
    },
  );
  stops.push(async () => {
    await worker.stop();
    await workerDatabase.close();
  });

  const database = createDatabase(config.databaseUrl, { max: 10 });
  const temporal = new Client({
    connection: await Connection.connect({
      address: config.temporal.address,
      ...connectionSecurity(config.temporal),
    }),
    namespace: config.temporal.namespace,
    dataConverter: payloadDataConverter({
      ...config.temporal,
      customerKeys: customerKeysIn(database.db, config.temporal.payloadKeys),
    }),
  });
  const {
    koa,
    close: closeApp,
    pspDocument,
    opsDocument,
  } = createApp({
    config,
    database,
    temporal,
    logger,
    metrics: createHttpMetrics({ processMetrics: false }),
  });
  const server = koa.listen(port, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  stops.push(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await closeApp();
    await temporal.connection.close();
    await database.close();
  });

  const token = await sandboxToken(baseUrl);
  say(`stack ready in ${seconds(started)}; ${baseUrl}, log in .data/fuzz/service.log`);
  if (serveOnly) {
    // For reproducing a finding by hand (curl, `st replay`): the stack until Ctrl-C.
    say(`serving; Authorization: Bearer ${token}`);
    await new Promise((resolve) => process.once('SIGINT', resolve));
    exitCode = 0;
  } else {
    await writeFile(join(outputDir, 'psp.json'), JSON.stringify(pspDocument()));
    await writeFile(join(outputDir, 'ops.json'), JSON.stringify(opsDocument()));
    // The partner API with a partner's token; the PSP's notification signed by the hooks
    // (test/fuzz/hooks.py) with the PSP secret, over the exact bytes each request sends.
    const runs = [
      {
        name: 'partner API',
        args: [`${baseUrl}/v3/openapi.json`, `--header=Authorization: Bearer ${token}`],
        env: {} as Record<string, string>,
      },
      {
        name: 'PSP API',
        args: [join(outputDir, 'psp.json'), `--url=${baseUrl}`],
        env: { FUZZ_PSP_SECRET: config.pspWebhookSecret ?? '' },
      },
      // The ops routes of the PSP's money (contract §16): reconciliation reports and runs,
      // devoluções, payouts. With the break-glass token (every desk role); the rest of the ops
      // API is staff's and tested by its own files.
      {
        name: 'ops API',
        args: [
          join(outputDir, 'ops.json'),
          `--url=${baseUrl}`,
          `--header=Authorization: Bearer ${OPS_TOKEN}`,
          ...OPS_OPERATIONS.map((id) => `--include-operation-id=${id}`),
        ],
        env: {},
      },
    ];
    const totals = { generated: 0, passed: 0, skipped: 0, failed: 0 };
    exitCode = 0;
    for (const run of runs) {
      const fuzzStarted = Date.now();
      const reportDir = join(outputDir, run.name.split(' ')[0]!.toLowerCase());
      const args = [
        `--config-file=${join(fuzzDir, 'schemathesis.toml')}`,
        'run',
        ...run.args,
        `--seed=${SEED}`,
        `--max-examples=${MAX_EXAMPLES}`,
        '--report=junit,ndjson',
        `--report-dir=${reportDir}`,
        // `npm run fuzz -- --include-operation-id=createCustomer` narrows a run, for instance.
        ...process.argv.slice(2),
      ];
      say(
        `${run.name}: Schemathesis ${SCHEMATHESIS_VERSION}, seed ${SEED}, ${MAX_EXAMPLES} examples per operation`,
      );
      const { code, cases } = await runSchemathesis(st, args, run.env);
      if (code !== 0) exitCode = code;
      say(
        `${run.name}: ${cases?.generated ?? 'an unknown number of'} cases in ${seconds(fuzzStarted)}; ${code === 0 ? 'no findings' : `findings (exit ${code}); reports in ${reportDir}`}`,
      );
      totals.generated += cases?.generated ?? 0;
      totals.passed += cases?.passed ?? 0;
      totals.skipped += cases?.skipped ?? 0;
      totals.failed += Math.max(cases ? cases.generated - cases.passed : 0, code === 0 ? 0 : 1);
    }
    say(`${totals.generated} cases in all (whole run ${seconds(started)})`);
    // The plain closing line CI reads (see the README): the fuzzer's part, with what it ran.
    process.stdout.write(
      `fuzz: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`,
    );
  }
} catch (error) {
  say(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => {});
  await rm(scratch, { recursive: true, force: true });
}
process.exit(exitCode);

/** A partner made the way ops make one, and a bearer token of its sandbox credential. */
async function sandboxToken(baseUrl: string): Promise<string> {
  const created = await fetch(`${baseUrl}/ops/v1/partners`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${OPS_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Fuzzer' }),
  });
  if (created.status !== 201) throw new Error(`partner creation answered ${created.status}`);
  const partner = (await created.json()) as {
    credentials: { sandbox: { client_id: string; client_secret: string } };
  };
  const exchanged = await fetch(`${baseUrl}/v3/auth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', ...partner.credentials.sandbox }),
  });
  if (exchanged.status !== 200) throw new Error(`token exchange answered ${exchanged.status}`);
  return ((await exchanged.json()) as { access_token: string }).access_token;
}

interface CaseCounts {
  generated: number;
  passed: number;
  skipped: number;
}

/** Runs `st`, echoing its output, and reads the numbers of cases off its summary. */
function runSchemathesis(
  executable: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; cases: CaseCounts | undefined }> {
  return new Promise((resolve, reject) => {
    const child = spawn(executable, args, {
      // Hypothesis keeps a folder in the working directory: the reports' folder, not the tree.
      cwd: outputDir,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: {
        ...process.env,
        SCHEMATHESIS_TELEMETRY: 'false',
        PYTHONPATH: fuzzDir,
        ...env,
      },
    });
    let output = '';
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
      // Its report ends in pytest's closing form ("=== 2 warnings in 92.23s ==="), which CI reads
      // as a test run that ran no test: the same words, without the rule.
      const closing = /^=+ (.+ in [\d.]+s) =+$/.exec(line);
      process.stdout.write(`${closing ? `Schemathesis: ${closing[1]}` : line}\n`);
      output += `${line}\n`;
    });
    child.once('error', reject);
    // After its output is read through, unlike 'exit'.
    child.once('close', (code) => {
      // "Test cases:\n  5021 generated, 5021 passed, 62 skipped"
      const summary = /Test cases:\s*\n?\s*(\d+) generated([^\n]*)/i.exec(output);
      const count = (word: string) =>
        Number(new RegExp(`(\\d+) ${word}`).exec(summary?.[2] ?? '')?.[1] ?? 0);
      const cases = summary
        ? { generated: Number(summary[1]), passed: count('passed'), skipped: count('skipped') }
        : undefined;
      // A narrowed run (`-- --include-operation-id=…`) may select nothing in one document.
      const narrowedAway =
        process.argv.length > 2 && output.includes('No operations matched the filters');
      resolve({ code: narrowedAway ? 0 : (code ?? 1), cases });
    });
  });
}
