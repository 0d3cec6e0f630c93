/**
 * `npm run dev:cluster`: the production topology on this machine — a real Temporal server (built
 * from its Go module, `npm run provision -- --cluster`) on the embedded PostgreSQL with its Web UI,
 * MinIO, Mailpit, and two API and two worker processes from the production build (`npm run
 * build`, `NODE_ENV=production`), each API on its own port: clients spread their requests over
 * both (no proxy in front). State lives in `.data/cluster/`, apart from `npm run dev`'s, and the
 * ports are apart too, so both can run at once. Ctrl-C stops everything, in order.
 *
 * Production refuses published secrets, so the first start makes random ones and keeps them in
 * `.data/cluster/secrets.json` (gitignored, like all of `.data`). CLUSTER_SKIP_BUILD=1 reuses
 * `dist/`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runMigrations } from '../db/migrate.js';
import { startEmbeddedPostgres, type RunningPostgres } from '../devstack/embedded-postgres.js';
import { startMailpit, type MailpitServer } from '../devstack/mailpit.js';
import { startMinio, type MinioServer } from '../devstack/minio.js';
import { startTemporalServer } from '../devstack/temporal-server.js';
import { projectRoot } from '../project-root.js';
import { heapFlags } from './node-flags.js';

const dataDir = join(projectRoot, '.data', 'cluster');
const env = process.env;
const number = (name: string, fallback: number) => Number(env[name] ?? fallback);
const ports = {
  postgres: number('CLUSTER_POSTGRES_PORT', 5434),
  temporal: number('CLUSTER_TEMPORAL_PORT', 7234),
  temporalUi: number('CLUSTER_TEMPORAL_UI_PORT', 8234),
  minio: number('CLUSTER_MINIO_PORT', 9100),
  minioConsole: number('CLUSTER_MINIO_CONSOLE_PORT', 9101),
  smtp: number('CLUSTER_SMTP_PORT', 1026),
  mailbox: number('CLUSTER_MAILBOX_PORT', 8026),
  apis: [number('CLUSTER_API_PORT_1', 3101), number('CLUSTER_API_PORT_2', 3102)],
  workerMetrics: [9471, 9472],
};
const say = (line: string) => console.log(`[cluster] ${line}`);

type Stop = () => Promise<void>;
const stops: { name: string; stop: Stop }[] = [];
const children: { name: string; process: ChildProcess }[] = [];
let stopping = false;

interface Secrets {
  OPS_TOKEN: string;
  TOKEN_SIGNING_KEYS: string;
  DATA_ENCRYPTION_KEYS: string;
  SIGNING_LINK_KEYS: string;
  PSP_WEBHOOK_SECRET: string;
}

/** This cluster's own secrets: made once, kept in `.data/cluster/secrets.json` (mode 600). */
async function clusterSecrets(): Promise<Secrets> {
  const file = join(dataDir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as Secrets;
  const secret = () => randomBytes(32).toString('base64url');
  const secrets: Secrets = {
    OPS_TOKEN: secret(),
    TOKEN_SIGNING_KEYS: `k1:${secret()}`,
    DATA_ENCRYPTION_KEYS: `k1:${secret()}`,
    SIGNING_LINK_KEYS: `k1:${secret()}`,
    PSP_WEBHOOK_SECRET: secret(),
  };
  await writeFile(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

async function main(): Promise<void> {
  const started = Date.now();
  await mkdir(dataDir, { recursive: true });

  if (env.CLUSTER_SKIP_BUILD === '1') say('using dist/ as built (CLUSTER_SKIP_BUILD=1)');
  else {
    say('building the production bundle (npm run build)…');
    const built = spawnSync('npm', ['run', 'build'], { cwd: projectRoot, stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run build failed');
  }

  say(`starting embedded PostgreSQL on 127.0.0.1:${ports.postgres} (data in .data/cluster)…`);
  const postgres: RunningPostgres = await startEmbeddedPostgres({
    dataDir: join(dataDir, 'postgres'),
    port: ports.postgres,
    database: 'embedded_credit',
  });
  stops.push({ name: 'PostgreSQL', stop: () => postgres.stop() });
  await runMigrations(postgres.url);

  say(`starting the Temporal server on 127.0.0.1:${ports.temporal}, on that PostgreSQL…`);
  const url = new URL(postgres.url);
  const temporal = await startTemporalServer({
    postgres: {
      host: url.hostname,
      port: Number(url.port),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
    },
    dataDir: join(dataDir, 'temporal'),
    frontendPort: ports.temporal,
    uiPort: ports.temporalUi,
    progress: say,
  });
  stops.push({ name: 'Temporal server', stop: () => temporal.stop() });

  say(`starting MinIO on 127.0.0.1:${ports.minio}…`);
  const minio: MinioServer = await startMinio({
    dataDir: join(dataDir, 'minio'),
    port: ports.minio,
    consolePort: ports.minioConsole,
    progress: say,
  });
  stops.push({ name: 'MinIO', stop: () => minio.stop() });

  say(`starting Mailpit on 127.0.0.1:${ports.smtp}…`);
  const mailpit: MailpitServer = await startMailpit({
    smtpPort: ports.smtp,
    uiPort: ports.mailbox,
    dataFile: join(dataDir, 'mailpit.db'),
    progress: say,
  });
  stops.push({ name: 'Mailpit', stop: () => mailpit.stop() });

  const secrets = await clusterSecrets();
  const publicBaseUrl = `http://127.0.0.1:${ports.apis[0]}`;
  // The names docker-compose.yml gives the same settings.
  const shared: NodeJS.ProcessEnv = {
    ...env,
    ...secrets,
    ...minio.env,
    NODE_ENV: 'production',
    DATABASE_URL: postgres.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    PUBLIC_BASE_URL: publicBaseUrl,
    SMTP_URL: mailpit.smtpUrl,
    MAIL_FROM: 'Embedded Credit <nao-responda@localhost>',
    LENDER_PIX_KEY: env.LENDER_PIX_KEY ?? '11222333000181',
  };
  for (const [index, port] of ports.workerMetrics.entries())
    startChild(`worker-${index + 1}`, 'dist/src/main/worker.js', {
      ...shared,
      WORKER_METRICS_PORT: String(port),
    });
  for (const [index, port] of ports.apis.entries())
    startChild(`api-${index + 1}`, 'dist/src/main/api.js', { ...shared, PORT: String(port) });
  await Promise.all(ports.apis.map((port) => waitForReady(`http://127.0.0.1:${port}/readyz`)));

  console.log(
    [
      '',
      `  Embedded-credit cluster is ready (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      '',
      ...ports.apis.map(
        (port, index) =>
          `  API ${index + 1}            http://127.0.0.1:${port}/v3   (docs /docs, health /readyz, /metrics)`,
      ),
      '                   clients spread their requests over both: there is no proxy in front',
      `  Workers          2 processes (metrics on :${ports.workerMetrics.join(', :')})`,
      `  Temporal         ${temporal.address} (server ${'1.29.1'} on PostgreSQL, namespace ${temporal.namespace})`,
      `  Temporal UI      ${temporal.uiUrl ?? '(none)'}`,
      `  MinIO console    ${minio.console ?? '(none)'}   (user ${minio.env.AWS_ACCESS_KEY_ID}, password ${minio.env.AWS_SECRET_ACCESS_KEY})`,
      `  Mailbox          http://127.0.0.1:${ports.mailbox}`,
      `  PostgreSQL       ${postgres.url}`,
      `  Ops token        ${secrets.OPS_TOKEN}   (this cluster's own: .data/cluster/secrets.json)`,
      '',
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

function startChild(name: string, entry: string, childEnv: NodeJS.ProcessEnv): void {
  // Own process group: Ctrl-C reaches the supervisor only, which stops things in order.
  const child = spawn(process.execPath, [...heapFlags, join(projectRoot, entry)], {
    cwd: projectRoot,
    env: childEnv,
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  children.push({ name, process: child });
  child.on('exit', (code, signal) => {
    if (stopping) return;
    say(`${name} exited unexpectedly (${signal ?? `code ${code}`}); stopping everything.`);
    void shutdown(1);
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
  // The APIs first (no new work), then the workers (they finish their tasks), then the servers.
  const order = [...children].sort(
    (a, b) => Number(b.name.startsWith('api')) - Number(a.name.startsWith('api')),
  );
  for (const { process: child } of order)
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.kill('SIGTERM');
    });
  for (const { name, stop } of stops.reverse())
    await stop().catch((error: unknown) => say(`${name}: ${String(error)}`));
  say('stopped.');
  process.exit(exitCode);
}

process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));

main().catch(async (error: unknown) => {
  console.error(
    `\n[cluster] could not start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  await shutdown(1);
});
