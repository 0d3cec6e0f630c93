/**
 * `npm run dev`: the whole service on one machine, as one supervised process tree — embedded
 * PostgreSQL, migrations (as the owner; the API and the worker connect as a role with row access
 * only), the Temporal dev server with its UI, MinIO, Mailpit (the mailbox of every
 * e-mail sent), Jaeger (traces), the PSP simulator (the lender's PSP, contract §16), the worker and the API. Ctrl-C
 * stops all of it. DATABASE_URL, TEMPORAL_ADDRESS, SMTP_URL or PSP_API_URL point at servers of your
 * own instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { eq } from 'drizzle-orm';
import { ensureDemoStaff } from '../devstack/demo-staff.js';
import { createPartner, type CreatedPartner } from '../commands/create-partner.js';
import {
  DEVELOPMENT_OPS_TOKEN,
  DEVELOPMENT_PSP_CLIENT,
  DEVELOPMENT_PSP_WEBHOOK_SECRET,
  SANDBOX_LENDER,
  SANDBOX_PIX_KEY,
} from '../config.js';
import { createDatabase } from '../db/client.js';
import { migrateDatabase } from '../db/migrate.js';
import { partners } from '../db/schema/index.js';
import { migrateForApplication } from '../devstack/database-roles.js';
import { startEmbeddedPostgres, type RunningPostgres } from '../devstack/embedded-postgres.js';
import { startJaeger, type JaegerServer } from '../devstack/jaeger.js';
import { startMailpit, type MailpitServer } from '../devstack/mailpit.js';
import { startMinio, type MinioServer } from '../devstack/minio.js';
import { isSupervisor, relayToSupervisor } from '../devstack/own-process-group.js';
import { keptPki } from '../devstack/pki.js';
import { startPspSimulator, type PspSimulator } from '../devstack/psp-simulator/index.js';
import { createLocalFileStore } from '../storage/file-store.js';
import { createS3FileStore } from '../storage/s3-file-store.js';
import { resolveTemporalCli } from '../devstack/temporal-binaries.js';
import { startTemporalDevServer } from '../devstack/temporal-dev-server.js';
import { projectRoot } from '../project-root.js';
import { heapFlags } from './node-flags.js';

const dataDir = join(projectRoot, '.data');
const env = process.env;
const port = Number(env.PORT ?? 3000);
const publicBaseUrl = (env.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
const uiPort = Number(env.TEMPORAL_UI_PORT ?? 8233);
const devPort = Number(env.TEMPORAL_DEV_PORT ?? 7233);
const postgresPort = Number(env.EMBEDDED_POSTGRES_PORT ?? 5433);
// The UI shows payloads decoded through the API's codec endpoint (the ops listener's, if apart):
// on the same host name as the UI (localhost), so its session cookie goes with the UI's fetches.
const uiOrigin = env.TEMPORAL_UI_ORIGIN ?? `http://localhost:${uiPort}`;
const opsBaseUrl = env.OPS_PORT ? `http://localhost:${env.OPS_PORT}` : publicBaseUrl;
const codecEndpoint = `${opsBaseUrl}/ops/v1/temporal-codec`;
const say = (line: string) => console.log(`[dev] ${line}`);

let postgresServer: RunningPostgres | undefined;
let temporalServer: TestWorkflowEnvironment | undefined;
let minioServer: MinioServer | undefined;
let mailpitServer: MailpitServer | undefined;
let jaegerServer: JaegerServer | undefined;
let pspSimulator: PspSimulator | undefined;
const children: { name: string; process: ChildProcess }[] = [];
let stopping = false;

async function main(): Promise<void> {
  const started = Date.now();
  await mkdir(dataDir, { recursive: true });

  let databaseUrl = env.DATABASE_URL;
  if (databaseUrl) {
    say('using DATABASE_URL');
    // Migrated as MIGRATION_DATABASE_URL's role when set (DATABASE_URL's then granted), else as
    // DATABASE_URL's own (development only; the API then warns that its role may change the schema).
    const owner = env.MIGRATION_DATABASE_URL;
    await migrateDatabase(
      owner ? { ownerUrl: owner, appUrl: databaseUrl } : { ownerUrl: databaseUrl },
    );
  } else {
    say(`starting embedded PostgreSQL on 127.0.0.1:${postgresPort} (data in .data/postgres)…`);
    postgresServer = await startEmbeddedPostgres({
      dataDir: join(dataDir, 'postgres'),
      port: postgresPort,
      database: 'embedded_credit',
    });
    // Migrated as its superuser; the API and the worker connect as a role with row access only.
    databaseUrl = await migrateForApplication(postgresServer.url);
  }
  const demo = await ensureDemoPartner(databaseUrl);
  const demoStaffFile = join(dataDir, 'demo-staff.json');
  await ensureDemoStaff(databaseUrl, demoStaffFile);

  let temporalAddress = env.TEMPORAL_ADDRESS;
  let temporalUi: string | undefined;
  if (temporalAddress) {
    say(`using TEMPORAL_ADDRESS=${temporalAddress}`);
  } else {
    const cli = await resolveTemporalCli((line) => say(line));
    say(
      `starting the Temporal dev server on 127.0.0.1:${devPort} (state in .data/temporal.sqlite; CLI from ${cli.source})…`,
    );
    temporalServer = await startTemporalDevServer({
      cli,
      port: devPort,
      uiPort,
      dbFilename: join(dataDir, 'temporal.sqlite'),
      uiCodecEndpoint: codecEndpoint,
    });
    temporalAddress = temporalServer.address;
    temporalUi = `http://localhost:${uiPort}`;
  }

  // Documents and contracts: MinIO unless S3_BUCKET (with S3_ENDPOINT) or FILE_STORE=local say otherwise.
  let objectStore: Record<string, string> = {};
  let objectStoreConsole: string | undefined;
  if (env.FILE_STORE === 'local' || env.S3_BUCKET) {
    say(env.FILE_STORE === 'local' ? 'using FILE_STORE=local' : `using S3_BUCKET=${env.S3_BUCKET}`);
  } else {
    const minioPort = Number(env.MINIO_PORT ?? 9000);
    const consolePort = Number(env.MINIO_CONSOLE_PORT ?? 9001);
    say(`starting MinIO on 127.0.0.1:${minioPort} (objects in .data/minio)…`);
    minioServer = await startMinio({
      dataDir: join(dataDir, 'minio'),
      port: minioPort,
      consolePort,
      progress: say,
    });
    objectStore = minioServer.env;
    objectStoreConsole = minioServer.console;
    await importLocalUploads(minioServer);
  }

  // Mail (signing codes): Mailpit keeps every message and shows it, unless SMTP_URL names a server.
  let smtpUrl = env.SMTP_URL;
  let mailbox: string | undefined;
  if (smtpUrl) {
    say('using SMTP_URL');
  } else {
    const smtpPort = Number(env.MAILPIT_SMTP_PORT ?? 1025);
    const mailpitUiPort = Number(env.MAILPIT_UI_PORT ?? 8025);
    say(`starting Mailpit on 127.0.0.1:${smtpPort} (messages in .data/mailpit.db)…`);
    mailpitServer = await startMailpit({
      smtpPort,
      uiPort: mailpitUiPort,
      dataFile: join(dataDir, 'mailpit.db'),
      progress: say,
    });
    smtpUrl = mailpitServer.smtpUrl;
    mailbox = `  Mailbox (Mailpit) http://localhost:${mailpitUiPort}   (SMTP 127.0.0.1:${smtpPort}; every e-mail the service sends lands here)`;
  }

  // Traces: Jaeger receives the API's and the worker's spans and shows them, unless an OTLP
  // endpoint of your own is set or OTEL_SDK_DISABLED=true turns tracing off.
  const traces = await startDevTraces();

  // The lender's PSP (contract §16): the simulator, unless PSP_API_URL names a PSP of your own.
  let pspEnv: Record<string, string> = {};
  let pspLine: string | undefined;
  if (env.PSP_API_URL) {
    say('using PSP_API_URL');
  } else {
    const simulatorPort = Number(env.PSP_SIMULATOR_PORT ?? 9443);
    say(`starting the PSP simulator on 127.0.0.1:${simulatorPort} (state in .data/psp-simulator)…`);
    const simulatorStarted = Date.now();
    // Mutual TLS with a PKI made once and kept (a year), so the paths the API gets stay put.
    const pki = keptPki(join(dataDir, 'psp-pki'));
    // Its notifications reach this API on loopback (never PUBLIC_BASE_URL, which may be a tunnel),
    // signed with the API's secret; under PSP_WEBHOOK_AUTH=mtls there is no secret to sign with.
    const psp = `http://127.0.0.1:${port}/psp/v1`;
    const webhookSecret = env.PSP_WEBHOOK_SECRET ?? DEVELOPMENT_PSP_WEBHOOK_SECRET;
    pspSimulator = await startPspSimulator({
      port: simulatorPort,
      stateFile: join(dataDir, 'psp-simulator', 'state.json'),
      tlsFiles: { cert: pki.server.certFile, key: pki.server.keyFile, ca: pki.ca.certFile },
      client: DEVELOPMENT_PSP_CLIENT,
      // The account holder is the lender the API names (its Pix key: the sandbox's unless set).
      receiver: {
        pixKey: env.LENDER_PIX_KEY ?? SANDBOX_PIX_KEY,
        name: env.LENDER_NAME ?? SANDBOX_LENDER.LENDER_NAME,
        cnpj: env.LENDER_CNPJ ?? SANDBOX_LENDER.LENDER_CNPJ,
        city: env.LENDER_PIX_CITY ?? 'SAO PAULO',
        uf: 'SP',
        cep: '01310100',
        logradouro: 'Avenida Paulista, 1000',
      },
      ...(env.PSP_WEBHOOK_AUTH === 'mtls'
        ? {}
        : {
            notify: { url: `${psp}/pix`, secret: webhookSecret },
            notifyPayouts: { url: `${psp}/payouts`, secret: webhookSecret },
          }),
    });
    say(`PSP simulator listening (${Date.now() - simulatorStarted} ms)`);
    pspEnv = {
      PSP_API_URL: pspSimulator.url,
      PSP_CLIENT_ID: DEVELOPMENT_PSP_CLIENT.id,
      PSP_CLIENT_SECRET: DEVELOPMENT_PSP_CLIENT.secret,
      PSP_TLS_CERT: pki.client.certFile,
      PSP_TLS_KEY: pki.client.keyFile,
      PSP_TLS_CA: pki.ca.certFile,
    };
    pspLine = `  PSP simulator    ${pspSimulator.url}   (state in .data/psp-simulator; a payer pays a charge: curl --cacert ${relative(projectRoot, pki.ca.certFile)} -X POST ${pspSimulator.url}/_simulator/charges/<txid>/pay)`;
  }

  const childEnv: NodeJS.ProcessEnv = {
    ...env,
    ...objectStore,
    ...pspEnv,
    ...traces.env,
    SMTP_URL: smtpUrl,
    NODE_ENV: env.NODE_ENV ?? 'development',
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    PUBLIC_BASE_URL: publicBaseUrl,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: env.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? 'true',
    // A partner's receiver on this machine: http://localhost:4000/hook (docs/walkthrough).
    WEBHOOK_ALLOW_LOOPBACK_HTTP: env.WEBHOOK_ALLOW_LOOPBACK_HTTP ?? 'true',
    TEMPORAL_UI_ORIGIN: uiOrigin,
    // The SCR 3040's header (docs/walkthrough-production-psp.md, section 10): demo values.
    SCR_INSTITUTION_CNPJ: env.SCR_INSTITUTION_CNPJ ?? env.LENDER_CNPJ ?? SANDBOX_LENDER.LENDER_CNPJ,
    SCR_RESPONSIBLE_NAME: env.SCR_RESPONSIBLE_NAME ?? 'Ana Admin',
    SCR_RESPONSIBLE_EMAIL: env.SCR_RESPONSIBLE_EMAIL ?? 'scr@lender.example',
    SCR_RESPONSIBLE_PHONE: env.SCR_RESPONSIBLE_PHONE ?? '1133334444',
  };
  const worker = startChild('worker', 'src/main/worker.ts', childEnv);
  const workerReady = readyMessage(worker, 180_000);
  startChild('api', 'src/main/api.ts', childEnv);
  await waitForReady(`http://127.0.0.1:${port}/readyz`);
  // The worker's bundling output comes first: the banner stays the last thing on screen.
  await workerReady;

  const opsToken = env.OPS_TOKEN ?? DEVELOPMENT_OPS_TOKEN;
  console.log(
    [
      '',
      `  Embedded-credit API is ready (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      '',
      `  API              ${publicBaseUrl}/v3`,
      `  Docs             ${publicBaseUrl}/docs`,
      `  Health           ${publicBaseUrl}/readyz   metrics: ${publicBaseUrl}/metrics`,
      `  Back office      ${opsBaseUrl}/ops/console   (staff sign in with their own operator token: the demo staff's, below)`,
      `  Temporal UI      ${temporalUi ?? `(external server at ${temporalAddress})`}`,
      ...(temporalUi
        ? [
            `    a record's workflow: ${temporalUi}/namespaces/default/workflows/loan%2Fln_…  (or search LoanId = "ln_…", CustomerId = "cust_…")`,
            `    payloads are encrypted; to see them decoded, sign in at ${codecEndpoint} with the ops token`,
            `    (an hour), then once per browser open the UI's Codec Server settings (top bar), choose "Use my`,
            `    browser setting", endpoint ${codecEndpoint}, tick "Include cross-origin credentials"`,
          ]
        : []),
      ...(objectStoreConsole
        ? [
            `  MinIO console    ${objectStoreConsole}   (root: user ${minioServer!.root.accessKeyId}, password ${minioServer!.root.secretAccessKey}; bucket ${objectStore.S3_BUCKET}, which the service reaches as ${objectStore.AWS_ACCESS_KEY_ID}, limited to its objects)`,
          ]
        : []),
      ...(mailbox ? [mailbox] : []),
      ...(traces.line ? [traces.line] : []),
      ...(pspLine ? [pspLine] : []),
      `  Ops token        ${opsToken}${env.OPS_TOKEN ? '' : '   (development default)'}`,
      '    the break-glass administrator, for incidents: every use is audited and counted',
      `  Demo staff       ${demoStaffFile}: each operator's token`,
      '    Ana and Bruno (admin: one asks, the other approves), Carla (kyc_reviewer), Davi and Elisa',
      '    (payments and disbursement: the maker and the checker of money moved by hand)',
      '',
      `  Demo partner     ${demo.name} (${demo.partner_id})`,
      `    sandbox client_id      ${demo.credentials.sandbox.client_id}`,
      `    sandbox client_secret  ${demo.credentials.sandbox.client_secret}`,
      `    (both environments' credentials: ${join(dataDir, 'demo-partner.json')})`,
      '    request lines are at debug level here: LOG_LEVEL=debug npm run dev shows them',
      '',
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

/** Jaeger for the traces, unless OTEL_EXPORTER_OTLP_ENDPOINT names a collector or tracing is off. */
async function startDevTraces(): Promise<{ env: Record<string, string>; line?: string }> {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') {
    say('tracing off (OTEL_SDK_DISABLED=true)');
    return { env: {} };
  }
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
    say('using OTEL_EXPORTER_OTLP_ENDPOINT for traces');
    return { env: {} };
  }
  const uiPort = Number(env.JAEGER_UI_PORT ?? 16686);
  say(`starting Jaeger on 127.0.0.1:${uiPort} (traces kept in memory)…`);
  jaegerServer = await startJaeger({
    uiPort,
    otlpHttpPort: Number(env.JAEGER_OTLP_HTTP_PORT ?? 4318),
    otlpGrpcPort: Number(env.JAEGER_OTLP_GRPC_PORT ?? 4317),
    progress: say,
  });
  const ui = `http://localhost:${uiPort}`;
  return {
    env: jaegerServer.env,
    line: `  Traces (Jaeger)  ${ui}   (service embedded-credit-api, or search by tag embedded_credit.request_id=<X-Request-Id>; OTLP in at ${jaegerServer.otlpEndpoint})`,
  };
}

/**
 * Files kept by the local folder store of earlier versions (`.data/uploads`) are copied into the
 * bucket once, so documents and contracts made before keep their files.
 */
async function importLocalUploads(minio: MinioServer): Promise<void> {
  const folder = join(dataDir, 'uploads');
  const marker = join(folder, '.imported-to-minio');
  if (!existsSync(folder) || existsSync(marker)) return;
  const local = createLocalFileStore(folder);
  const bucket = createS3FileStore({
    endpoint: minio.endpoint,
    bucket: minio.bucket,
    region: minio.env.S3_REGION!,
    credentials: {
      accessKeyId: minio.env.AWS_ACCESS_KEY_ID!,
      secretAccessKey: minio.env.AWS_SECRET_ACCESS_KEY!,
    },
  });
  let copied = 0;
  for await (const page of local.list()) {
    for (const { key } of page) {
      const bytes = await readFile(join(folder, key));
      await bucket.put(key, bytes, createHash('sha256').update(bytes).digest('hex'));
      copied++;
    }
  }
  await writeFile(marker, `${copied} files copied to the MinIO bucket ${minio.bucket}\n`);
  say(`copied ${copied} files of .data/uploads into MinIO`);
}

/** The demo partner's secrets are kept in .data (gitignored) so every start can print them. */
async function ensureDemoPartner(databaseUrl: string): Promise<CreatedPartner> {
  const file = join(dataDir, 'demo-partner.json');
  const database = createDatabase(databaseUrl, { max: 1 });
  try {
    if (existsSync(file)) {
      const saved = JSON.parse(await readFile(file, 'utf8')) as CreatedPartner;
      const found = await database.db.query.partners.findFirst({
        where: eq(partners.id, saved.partner_id),
      });
      if (found) return saved;
    }
    const created = await createPartner(database.db, { name: 'Demo Partner' });
    await writeFile(file, JSON.stringify(created, null, 2), { mode: 0o600 });
    return created;
  } finally {
    await database.close();
  }
}

function startChild(name: string, entry: string, childEnv: NodeJS.ProcessEnv): ChildProcess {
  // Own process group, so Ctrl-C reaches the supervisor only and it stops things in order; the IPC
  // channel closes if the supervisor dies, and the child then stops itself.
  const child = spawn(
    process.execPath,
    [...heapFlags, '--import', 'tsx', join(projectRoot, entry)],
    {
      cwd: projectRoot,
      env: childEnv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      detached: true,
    },
  );
  children.push({ name, process: child });
  child.on('exit', (code, signal) => {
    if (stopping) return;
    say(`${name} exited unexpectedly (${signal ?? `code ${code}`}); stopping everything.`);
    void shutdown(1);
  });
  return child;
}

/** Resolves when the child says it is ready (the worker, once it polls), or after `ms` anyway. */
function readyMessage(child: ChildProcess, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    child.on('message', (message: { type?: string }) => {
      if (message.type !== 'ready') return;
      clearTimeout(timer);
      resolve();
    });
  });
}

async function waitForReady(url: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (stopping) return;
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not answer 200 within 3 minutes`);
}

async function shutdown(exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  say('stopping…');
  await Promise.all(
    children.reverse().map(
      ({ process: child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
          child.once('exit', () => {
            clearTimeout(force);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
  await pspSimulator?.stop().catch((error: unknown) => say(`PSP simulator: ${String(error)}`));
  await mailpitServer?.stop().catch((error: unknown) => say(`Mailpit: ${String(error)}`));
  await jaegerServer?.stop().catch((error: unknown) => say(`Jaeger: ${String(error)}`));
  await minioServer?.stop().catch((error: unknown) => say(`MinIO: ${String(error)}`));
  await temporalServer
    ?.teardown()
    .catch((error: unknown) => say(`Temporal dev server: ${String(error)}`));
  await postgresServer?.stop().catch((error: unknown) => say(`PostgreSQL: ${String(error)}`));
  say('stopped.');
  process.exit(exitCode);
}

// Ctrl-C reaches the supervisor alone, which stops the API and the worker before the servers they
// use (PostgreSQL, the Temporal CLI, MinIO, Mailpit, the PSP simulator), so nothing logs errors
// about a server gone.
if (isSupervisor()) {
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  process.on('SIGHUP', () => void shutdown(0));
  process.once('disconnect', () => void shutdown(0));
  main().catch(async (error: unknown) => {
    console.error(
      `\n[dev] could not start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    await shutdown(1);
  });
} else {
  relayToSupervisor(join(projectRoot, 'src/main/dev.ts'), projectRoot);
}
