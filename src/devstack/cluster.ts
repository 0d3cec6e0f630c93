/**
 * The production topology on one machine, as `npm run dev:cluster` and `npm run bench:cluster`
 * start it: embedded PostgreSQL, a real Temporal server on it (or, for comparison, the Temporal
 * CLI's dev server on SQLite), MinIO, Mailpit, and API and worker processes from the production
 * build (`dist/`, `NODE_ENV=production`), each API on its own port. The caller builds `dist/`
 * first. Each API and worker can be killed and started again; PostgreSQL can be restarted in
 * place (same data, same port).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, closeSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { migrateForApplication } from './database-roles.js';
import { heapFlags } from '../main/node-flags.js';
import { projectRoot } from '../project-root.js';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded-postgres.js';
import { startMailpit, type MailpitServer } from './mailpit.js';
import { startMinio, type MinioServer } from './minio.js';
import { makePki } from './pki.js';
import { startPspSimulator, type PspSimulator } from './psp-simulator/index.js';
import { resolveTemporalCli } from './temporal-binaries.js';
import { startTemporalDevServer } from './temporal-dev-server.js';
import { startTemporalServer } from './temporal-server.js';

export interface ClusterPorts {
  postgres: number;
  temporal: number;
  /** The Temporal Web UI; none when omitted. */
  temporalUi?: number;
  minio: number;
  /** MinIO's console; none when omitted. */
  minioConsole?: number;
  /** Mailpit's SMTP and mailbox ports; free ones when omitted. */
  smtp?: number;
  mailbox?: number;
  /** One API process per port. */
  apis: number[];
  /** One worker process per entry: its metrics port (0: no metrics listener). */
  workerMetrics: number[];
}

/** What production refuses to take from the published development defaults. */
export interface ClusterSecrets {
  OPS_TOKEN: string;
  TOKEN_SIGNING_KEYS: string;
  DATA_ENCRYPTION_KEYS: string;
  SIGNING_LINK_KEYS: string;
  TEMPORAL_PAYLOAD_KEYS: string;
  APPROVAL_DECISION_KEYS: string;
  CONSOLE_SESSION_KEYS: string;
  PSP_WEBHOOK_SECRET: string;
  /** The cluster's client secret at its PSP simulator. */
  PSP_CLIENT_SECRET: string;
}

/** Random secrets, 32 bytes each. */
export function freshSecrets(): ClusterSecrets {
  const secret = () => randomBytes(32).toString('base64url');
  return {
    OPS_TOKEN: secret(),
    TOKEN_SIGNING_KEYS: `k1:${secret()}`,
    DATA_ENCRYPTION_KEYS: `k1:${secret()}`,
    SIGNING_LINK_KEYS: `k1:${secret()}`,
    TEMPORAL_PAYLOAD_KEYS: `k1:${secret()}`,
    APPROVAL_DECISION_KEYS: `k1:${secret()}`,
    CONSOLE_SESSION_KEYS: `k1:${secret()}`,
    PSP_WEBHOOK_SECRET: secret(),
    PSP_CLIENT_SECRET: secret(),
  };
}

/**
 * A cluster's own secrets: made once, kept in `<dataDir>/secrets.json` (mode 600). A secret of a
 * purpose added since the file was written (TEMPORAL_PAYLOAD_KEYS, APPROVAL_DECISION_KEYS, CONSOLE_SESSION_KEYS) is made and
 * kept beside the rest.
 */
export async function keptSecrets(dataDir: string): Promise<ClusterSecrets> {
  const file = join(dataDir, 'secrets.json');
  const kept = existsSync(file)
    ? (JSON.parse(await readFile(file, 'utf8')) as Partial<ClusterSecrets>)
    : {};
  const secrets = { ...freshSecrets(), ...kept };
  if (Object.keys(secrets).length !== Object.keys(kept).length)
    await writeFile(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

export interface ClusterOptions {
  /** PostgreSQL's data, the Temporal server's config and logs, MinIO's objects, Mailpit's mail. */
  dataDir: string;
  ports: ClusterPorts;
  secrets: ClusterSecrets;
  /**
   * `server` (default): Temporal server 1.29.1 on the same PostgreSQL (databases `temporal` and
   * `temporal_visibility`). `dev-server`: the Temporal CLI's dev server, its state in SQLite in
   * `dataDir` (what `npm run dev` runs), to compare against.
   */
  temporal?: 'server' | 'dev-server';
  /** Added last to every API's and worker's environment. */
  env?: NodeJS.ProcessEnv;
  /**
   * Where the APIs' and workers' output goes: the terminal (default), or a file per process in
   * this folder (`api-1.log`, …; appended across restarts).
   */
  logDir?: string;
  /** A process exited without being asked to (not by `kill`, `stop` or the cluster's stop). */
  onUnexpectedExit?: (process: ClusterProcess, code: number | null, signal: string | null) => void;
  /** Aborted while starting (Ctrl-C): what started is stopped and the start rejects. */
  signal?: AbortSignal;
  progress: (line: string) => void;
}

export interface ClusterProcess {
  name: string;
  kind: 'api' | 'worker';
  /** The API's port, or the worker's metrics port. */
  port: number;
  /** The API's base URL (`http://127.0.0.1:port`); undefined for a worker. */
  url: string | undefined;
  /** The running process; undefined once it exited. */
  readonly pid: number | undefined;
  /** Starts it (again) with the same environment. */
  start(): void;
  /** Resolves once an API answers `/readyz` with 200 (a worker: at once); stops waiting if aborted. */
  ready(timeoutMs?: number, signal?: AbortSignal): Promise<void>;
  /** Sends `signal` and waits for the exit (expected: no `onUnexpectedExit`). */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** SIGTERM, SIGKILL after 15 s; waits for the exit. */
  stop(): Promise<void>;
}

export interface RunningCluster {
  kind: 'server' | 'dev-server';
  postgres: {
    /** The owner's (superuser's) URL; the APIs and workers connect with `appUrl`. */
    url: string;
    /** The application role's URL: rows only, no DDL (the DATABASE_URL every API and worker gets). */
    appUrl: string;
    /** The postmaster's pid, from its pid file. */
    pid(): Promise<number | undefined>;
    /** Stops PostgreSQL (fast shutdown), waits `downMs`, starts it on the same data and port. */
    restart(downMs: number): Promise<void>;
  };
  temporal: {
    address: string;
    namespace: string;
    uiUrl: string | undefined;
    /** The real server's process (the dev server is started by the SDK: no handle). */
    process: ChildProcess | undefined;
    logFile: string | undefined;
  };
  minio: MinioServer;
  mailpit: MailpitServer;
  /** The PSP production needs (contract §16), simulated: its state in `<dataDir>/psp-simulator`. */
  psp: PspSimulator;
  /** The environment every API and worker gets (secrets included). */
  env: NodeJS.ProcessEnv;
  apis: ClusterProcess[];
  workers: ClusterProcess[];
  /** The APIs, then the workers, then the servers, in that order. */
  stop(): Promise<void>;
}

/**
 * Starts the servers, then the workers and the APIs; resolves once every API answers `/readyz`.
 * On a failure part-way, whatever started is stopped before the error is thrown.
 */
export async function startCluster(options: ClusterOptions): Promise<RunningCluster> {
  const { dataDir, ports, progress: say } = options;
  const kind = options.temporal ?? 'server';
  await mkdir(dataDir, { recursive: true });
  const stops: { name: string; stop: () => Promise<void> }[] = [];
  const processes: ClusterProcess[] = [];
  let stopped = false;
  const stopAll = async () => {
    if (stopped) return;
    stopped = true;
    // The APIs first (no new work), then the workers (they finish their tasks), then the servers.
    for (const process of [...processes].sort(
      (a, b) => Number(b.kind === 'api') - Number(a.kind === 'api'),
    ))
      await process.stop();
    for (const { name, stop } of stops.reverse())
      await stop().catch((error: unknown) => say(`${name}: ${String(error)}`));
  };

  // The UI decodes payloads through the first API's codec endpoint, on the UI's host name
  // (localhost), so the staff session cookie set there goes with the UI's fetches.
  const codec =
    ports.temporalUi !== undefined
      ? {
          uiCodecEndpoint: `http://localhost:${ports.apis[0]}/ops/v1/temporal-codec`,
          uiOrigin: `http://localhost:${ports.temporalUi}`,
        }
      : undefined;

  const stillWanted = () => {
    if (options.signal?.aborted) throw new Error('stopped while starting');
  };

  try {
    say(`starting embedded PostgreSQL on 127.0.0.1:${ports.postgres}…`);
    const postgresOptions = {
      dataDir: join(dataDir, 'postgres'),
      port: ports.postgres,
      database: 'embedded_credit',
    };
    let postgres: RunningPostgres = await startEmbeddedPostgres(postgresOptions);
    stops.push({ name: 'PostgreSQL', stop: () => postgres.stop() });
    // Migrated as the owner; the APIs and workers connect as a role with row access only.
    const appUrl = await migrateForApplication(postgres.url);
    stillWanted();

    let temporal: RunningCluster['temporal'];
    if (kind === 'server') {
      say(`starting the Temporal server on 127.0.0.1:${ports.temporal}, on that PostgreSQL…`);
      const url = new URL(postgres.url);
      const server = await startTemporalServer({
        postgres: {
          host: url.hostname,
          port: Number(url.port),
          user: decodeURIComponent(url.username),
          password: decodeURIComponent(url.password),
        },
        dataDir: join(dataDir, 'temporal'),
        frontendPort: ports.temporal,
        ...(ports.temporalUi !== undefined ? { uiPort: ports.temporalUi } : {}),
        ...(codec ? { uiCodecEndpoint: codec.uiCodecEndpoint } : {}),
        progress: say,
      });
      stops.push({ name: 'Temporal server', stop: () => server.stop() });
      temporal = {
        address: server.address,
        namespace: server.namespace,
        uiUrl: server.uiUrl,
        process: server.process,
        logFile: server.logFile,
      };
    } else {
      say(`starting the Temporal CLI dev server on 127.0.0.1:${ports.temporal} (SQLite)…`);
      const devServer = await startTemporalDevServer({
        cli: await resolveTemporalCli(say),
        port: ports.temporal,
        ...(ports.temporalUi !== undefined ? { uiPort: ports.temporalUi } : {}),
        ...(codec ? { uiCodecEndpoint: codec.uiCodecEndpoint } : {}),
        dbFilename: join(dataDir, 'temporal.sqlite'),
      });
      stops.push({ name: 'Temporal dev server', stop: () => devServer.teardown() });
      temporal = {
        address: `127.0.0.1:${ports.temporal}`,
        namespace: 'default',
        uiUrl: ports.temporalUi !== undefined ? `http://localhost:${ports.temporalUi}` : undefined,
        process: undefined,
        logFile: undefined,
      };
    }

    stillWanted();
    say(`starting MinIO on 127.0.0.1:${ports.minio}…`);
    const minio = await startMinio({
      dataDir: join(dataDir, 'minio'),
      port: ports.minio,
      ...(ports.minioConsole !== undefined ? { consolePort: ports.minioConsole } : {}),
      progress: say,
    });
    stops.push({ name: 'MinIO', stop: () => minio.stop() });

    stillWanted();
    say('starting Mailpit…');
    const mailpit = await startMailpit({
      ...(ports.smtp !== undefined ? { smtpPort: ports.smtp } : {}),
      ...(ports.mailbox !== undefined ? { uiPort: ports.mailbox } : {}),
      dataFile: join(dataDir, 'mailpit.db'),
      progress: say,
    });
    stops.push({ name: 'Mailpit', stop: () => mailpit.stop() });

    stillWanted();
    // Production requires a PSP: the simulator, over mutual TLS with a PKI made at each start.
    const lenderPixKey = process.env.LENDER_PIX_KEY ?? '11222333000181';
    const lenderName = process.env.LENDER_NAME ?? 'Embedded Credit Cluster SCD S.A.';
    const lenderCnpj = process.env.LENDER_CNPJ ?? '11444777000161';
    const pki = makePki(join(dataDir, 'psp-pki'));
    const psp = await startPspSimulator({
      port: 0,
      stateFile: join(dataDir, 'psp-simulator', 'state.json'),
      tlsFiles: { cert: pki.server.certFile, key: pki.server.keyFile, ca: pki.ca.certFile },
      client: { id: 'embedded-credit', secret: options.secrets.PSP_CLIENT_SECRET },
      receiver: {
        pixKey: lenderPixKey,
        name: lenderName,
        cnpj: lenderCnpj,
        city: 'SAO PAULO',
        uf: 'SP',
        cep: '01310100',
        logradouro: 'Avenida Paulista, 1000',
      },
      notify: {
        url: `http://127.0.0.1:${ports.apis[0]}/psp/v1/pix`,
        secret: options.secrets.PSP_WEBHOOK_SECRET,
      },
    });
    stops.push({ name: 'PSP simulator', stop: () => psp.stop() });

    stillWanted();
    // The names docker-compose.yml gives the same settings.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...options.secrets,
      ...minio.env,
      NODE_ENV: 'production',
      DATABASE_URL: appUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      PUBLIC_BASE_URL: `http://127.0.0.1:${ports.apis[0]}`,
      SMTP_URL: mailpit.smtpUrl,
      MAIL_FROM: 'Embedded Credit <nao-responda@localhost>',
      LENDER_PIX_KEY: lenderPixKey,
      // Production refuses the sandbox's fictitious lender: a lender of this topology's own.
      LENDER_NAME: lenderName,
      LENDER_CNPJ: lenderCnpj,
      // Production requires the SCR 3040's header (contract §19): this topology's lender reports.
      SCR_INSTITUTION_CNPJ: process.env.SCR_INSTITUTION_CNPJ ?? lenderCnpj,
      SCR_RESPONSIBLE_NAME: process.env.SCR_RESPONSIBLE_NAME ?? 'Ana Admin',
      SCR_RESPONSIBLE_EMAIL: process.env.SCR_RESPONSIBLE_EMAIL ?? 'scr@lender.example',
      SCR_RESPONSIBLE_PHONE: process.env.SCR_RESPONSIBLE_PHONE ?? '1133334444',
      PSP_API_URL: psp.url,
      PSP_CLIENT_ID: 'embedded-credit',
      PSP_TLS_CERT: pki.client.certFile,
      PSP_TLS_KEY: pki.client.keyFile,
      PSP_TLS_CA: pki.ca.certFile,
      ...(codec ? { TEMPORAL_UI_ORIGIN: codec.uiOrigin } : {}),
      ...options.env,
    };
    if (options.logDir) await mkdir(options.logDir, { recursive: true });
    for (const [index, port] of ports.workerMetrics.entries())
      processes.push(
        nodeProcess(options, `worker-${index + 1}`, 'worker', port, {
          ...env,
          WORKER_METRICS_PORT: String(port),
        }),
      );
    for (const [index, port] of ports.apis.entries())
      processes.push(
        nodeProcess(options, `api-${index + 1}`, 'api', port, { ...env, PORT: String(port) }),
      );
    for (const process of processes) process.start();
    await Promise.all(processes.map((process) => process.ready(180_000, options.signal)));
    stillWanted();

    return {
      kind,
      postgres: {
        get url() {
          return postgres.url;
        },
        appUrl,
        pid: async () => {
          const file = join(postgresOptions.dataDir, 'postmaster.pid');
          const pid = Number((await readFile(file, 'utf8').catch(() => '')).split('\n')[0]);
          return Number.isInteger(pid) && pid > 0 ? pid : undefined;
        },
        async restart(downMs) {
          await postgres.stop();
          await new Promise((resolve) => setTimeout(resolve, downMs));
          postgres = await startEmbeddedPostgres(postgresOptions);
        },
      },
      temporal,
      minio,
      mailpit,
      psp,
      env,
      apis: processes.filter((process) => process.kind === 'api'),
      workers: processes.filter((process) => process.kind === 'worker'),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** An API or worker process of the production build, started with the project's heap flags. */
function nodeProcess(
  options: ClusterOptions,
  name: string,
  kind: 'api' | 'worker',
  port: number,
  env: NodeJS.ProcessEnv,
): ClusterProcess {
  const entry = join(projectRoot, `dist/src/main/${kind}.js`);
  let child: ChildProcess | undefined;
  let expected = false;
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const exited = (of: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (of.exitCode !== null || of.signalCode !== null) return resolve();
      of.once('exit', () => resolve());
    });
  const self: ClusterProcess = {
    name,
    kind,
    port,
    url: kind === 'api' ? `http://127.0.0.1:${port}` : undefined,
    get pid() {
      return running() ? child?.pid : undefined;
    },
    start() {
      if (running()) throw new Error(`${name} is running`);
      expected = false;
      const log = options.logDir ? openSync(join(options.logDir, `${name}.log`), 'a') : undefined;
      // Own process group: a terminal's Ctrl-C reaches the supervisor only, which stops things in
      // order.
      const started = spawn(process.execPath, [...heapFlags, entry], {
        cwd: projectRoot,
        env,
        stdio: ['ignore', log ?? 'inherit', log ?? 'inherit'],
        detached: true,
      });
      if (log !== undefined) closeSync(log);
      child = started;
      started.once('exit', (code, signal) => {
        if (!expected) options.onUnexpectedExit?.(self, code, signal);
      });
    },
    async ready(timeoutMs = 180_000, signal) {
      if (kind !== 'api') return;
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline && !signal?.aborted) {
        if (!running()) throw new Error(`${name} exited before it was ready`);
        try {
          if ((await fetch(`${self.url}/readyz`)).ok) return;
        } catch {
          // not listening yet
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      if (signal?.aborted) return;
      throw new Error(`${self.url}/readyz did not answer 200 within ${timeoutMs / 1000} s`);
    },
    async kill(signal) {
      if (!child || !running()) return;
      expected = true;
      const gone = exited(child);
      child.kill(signal);
      await gone;
    },
    async stop() {
      if (!child || !running()) return;
      expected = true;
      const current = child;
      const force = setTimeout(() => current.kill('SIGKILL'), 15_000);
      const gone = exited(current);
      current.kill('SIGTERM');
      await gone;
      clearTimeout(force);
    },
  };
  return self;
}
