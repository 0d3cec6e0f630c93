/** What the HTTP benchmarks share: their own PostgreSQL and Temporal server, child processes, rows. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { parseKeyRing } from '../src/domain/key-ring.js';
import { payloadDataConverter } from '../src/temporal/payload-codec.js';
import { migrateForApplication } from '../src/devstack/database-roles.js';
import { makePki } from '../src/devstack/pki.js';
import { startPspSimulator, type PspSimulator } from '../src/devstack/psp-simulator/index.js';
import { startEmbeddedPostgres } from '../src/devstack/embedded-postgres.js';
import { resolveTemporalCli } from '../src/devstack/temporal-binaries.js';
import { startTemporalDevServer } from '../src/devstack/temporal-dev-server.js';
import { projectRoot } from '../src/project-root.js';
import { seedStaff } from '../test/helpers/seed-staff.js';

export const log = (line: string) => console.log(`[bench] ${line}`);

/** The payload codec's keys of the bench's production API and worker, and of its own clients. */
export const BENCH_TEMPORAL_PAYLOAD_KEYS = 'bench:bench-temporal-payload-key-0123456789abcdef';

/** A client of the bench's Temporal server that reads and writes payloads as its worker does. */
export async function benchTemporalClient(
  address: string,
  payloadKeys = BENCH_TEMPORAL_PAYLOAD_KEYS,
  namespace = 'default',
): Promise<Client> {
  const ring = parseKeyRing(payloadKeys).ring;
  if (!ring) throw new Error('the bench payload keys do not parse');
  return new Client({
    connection: await Connection.connect({ address }),
    namespace,
    dataConverter: payloadDataConverter({ payloadKeys: ring }),
  });
}

/** The benchmarks run the production build: `npm run build`, unless BENCH_SKIP_BUILD=1 reuses `dist/`. */
export function buildUnlessSkipped(): void {
  if (process.env.BENCH_SKIP_BUILD) return;
  log('npm run build…');
  const build = spawnSync('npm', ['run', 'build'], { cwd: projectRoot, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
}

/** node flags writing a CPU profile of the process into BENCH_PROFILE, when it names a folder. */
export const cpuProfileFlags = (): string[] =>
  process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];

/**
 * The environment of the production API and worker (`dist/`) on a bench stack: rate limits
 * lifted, fixed secrets, sandbox reviews an hour away, then `overrides`.
 */
export function productionEnv(
  stack: BenchStack,
  overrides: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: stack.databaseUrl,
    // No file is read or written under these loads: the local store, chosen explicitly, in the
    // benchmark's scratch folder (the worker's orphan sweep must not see the project's files).
    FILE_STORE: 'local',
    UPLOADS_DIR: stack.uploadsDir,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    // Not the published development defaults, which production refuses.
    OPS_TOKEN: 'bench-ops-token-0123456789abcdef0123456789',
    TOKEN_SIGNING_KEYS: 'bench:bench-token-signing-key-0123456789abcdef',
    DATA_ENCRYPTION_KEYS: 'bench:bench-data-encryption-key-0123456789abcdef',
    SIGNING_LINK_KEYS: 'bench:bench-signing-link-key-0123456789abcdef',
    TEMPORAL_PAYLOAD_KEYS: BENCH_TEMPORAL_PAYLOAD_KEYS,
    APPROVAL_DECISION_KEYS: 'bench:bench-approval-decision-key-0123456789abcdef',
    CONSOLE_SESSION_KEYS: 'bench:bench-console-session-key-0123456789abcdef',
    LENDER_PIX_KEY: '11222333000181',
    LENDER_NAME: 'Embedded Credit Bench SCD S.A.',
    LENDER_CNPJ: '11444777000161',
    // Production requires the SCR 3040's header (contract §19).
    SCR_INSTITUTION_CNPJ: '11444777000161',
    SCR_RESPONSIBLE_NAME: 'Bench Reporter',
    SCR_RESPONSIBLE_EMAIL: 'scr@bench.example',
    SCR_RESPONSIBLE_PHONE: '1133334444',
    PSP_WEBHOOK_SECRET: 'bench-psp-webhook-secret-0123456789abcdef',
    // Production requires its PSP: the stack's simulator.
    ...stack.pspEnv,
    SMTP_URL: 'smtp://127.0.0.1:1',
    PUBLIC_BASE_URL: `http://127.0.0.1:${overrides.PORT ?? '3000'}`,
    MAIL_FROM: 'Bench <bench@localhost>',
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
    SANDBOX_REVIEW_DELAY: '1h',
    ...overrides,
  };
}

export interface BenchStack {
  /** The application role's (rows only): what the API and the worker connect with. */
  databaseUrl: string;
  /** The owner's (the server's superuser): for a benchmark's own triggers and settings. */
  ownerDatabaseUrl: string;
  temporal: TestWorkflowEnvironment;
  temporalAddress: string;
  /** The PSP production requires (contract §16): a simulator of the stack's own. */
  psp: PspSimulator;
  /** PSP_API_URL and its companions, for the simulator. */
  pspEnv: NodeJS.ProcessEnv;
  /** A scratch folder for `FILE_STORE=local` (never the project's own `.data`). */
  uploadsDir: string;
  /** Starts `node [flags] entry` in the project root with `env`; stopped with the stack. */
  spawn(entry: string, env: NodeJS.ProcessEnv, flags?: string[]): ChildProcess;
  /** Stops PostgreSQL, waits `downMs`, starts it again on the same data and port. */
  restartPostgres(downMs: number): Promise<void>;
  /** Stops the Temporal server, waits `downMs`, starts it again on the same port and SQLite file. */
  restartTemporal(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * An embedded PostgreSQL and a Temporal dev server of the benchmark's own, in a scratch folder.
 * `temporalFile` keeps the server's state in SQLite on disk, as `npm run dev` does.
 */
export async function startBenchStack(options: {
  name: string;
  postgresPort: number;
  temporalPort: number;
  temporalFile?: boolean;
}): Promise<BenchStack> {
  const scratch = await mkdtemp(join(tmpdir(), `bench-${options.name}-`));
  const cli = await resolveTemporalCli(log);
  const startPostgres = () =>
    startEmbeddedPostgres({
      dataDir: join(scratch, 'pg'),
      port: options.postgresPort,
      database: 'bench',
      unsafeFast: true,
    });
  const startTemporal = () =>
    startTemporalDevServer({
      cli,
      port: options.temporalPort,
      ...(options.temporalFile ? { dbFilename: join(scratch, 'temporal.sqlite') } : {}),
    });
  let postgres = await startPostgres();
  let temporal = await startTemporal();
  // Migrated as the owner; the production processes connect as the application role (rows only).
  const databaseUrl = await migrateForApplication(postgres.url);
  // The staff test helpers act as (test/helpers/operators.ts reads them from TEST_STAFF): the
  // production API mails nothing here, so no operator could enroll through it.
  process.env.TEST_STAFF = JSON.stringify(await seedStaff(databaseUrl));
  const pki = makePki(join(scratch, 'psp-pki'));
  const pspClient = { id: 'bench', secret: 'bench-psp-client-secret-0123456789abcdef' };
  const psp = await startPspSimulator({
    port: 0,
    stateFile: join(scratch, 'psp', 'state.json'),
    tlsFiles: { cert: pki.server.certFile, key: pki.server.keyFile, ca: pki.ca.certFile },
    client: pspClient,
    receiver: {
      pixKey: '11222333000181',
      name: 'Embedded Credit Bench SCD S.A.',
      cnpj: '11444777000161',
      city: 'SAO PAULO',
      uf: 'SP',
      cep: '01310100',
      logradouro: 'Avenida Paulista, 1000',
    },
  });
  const children: ChildProcess[] = [];
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  return {
    databaseUrl,
    ownerDatabaseUrl: postgres.url,
    get temporal() {
      return temporal;
    },
    temporalAddress: `127.0.0.1:${options.temporalPort}`,
    uploadsDir: join(scratch, 'uploads'),
    psp,
    pspEnv: {
      PSP_API_URL: psp.url,
      PSP_CLIENT_ID: pspClient.id,
      PSP_CLIENT_SECRET: pspClient.secret,
      PSP_TLS_CERT: pki.client.certFile,
      PSP_TLS_KEY: pki.client.keyFile,
      PSP_TLS_CA: pki.ca.certFile,
    },
    async restartPostgres(downMs) {
      await postgres.stop();
      await pause(downMs);
      postgres = await startPostgres();
    },
    async restartTemporal(downMs) {
      await temporal.teardown();
      await pause(downMs);
      temporal = await startTemporal();
    },
    spawn(entry, env, flags = []) {
      const child = spawn(process.execPath, [...flags, join(projectRoot, entry)], {
        cwd: projectRoot,
        env,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      return child;
    },
    async stop() {
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(children.map(exited));
      await psp.stop();
      await temporal.teardown();
      await postgres.stop();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
  });
}

export async function waitForReady(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not answer 200 within 2 minutes`);
}

/** A size line of /proc/{pid}/status (`VmHWM`, `VmRSS`) in MB; undefined once the process is gone. */
async function procStatusMb(pid: number, field: 'VmHWM' | 'VmRSS'): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb) / 1024;
}

/** The peak resident set of a process so far (VmHWM), in MB. */
export async function peakRssMb(pid: number): Promise<number> {
  const mb = await procStatusMb(pid, 'VmHWM');
  if (mb === undefined) throw new Error(`no VmHWM for process ${pid}`);
  return mb;
}

/**
 * Samples the resident set (VmRSS) of some processes every 100 ms and keeps each one's peak per
 * phase, so a figure can say under which load the peak came (start, reads, writes).
 */
export function sampleRss(pids: Record<string, number>) {
  const peaks = new Map<string, Map<string, number>>();
  let phase = 'start';
  const sample = async () => {
    for (const [name, pid] of Object.entries(pids)) {
      const mb = await procStatusMb(pid, 'VmRSS');
      if (mb === undefined) continue;
      const byPhase = peaks.get(name) ?? new Map<string, number>();
      peaks.set(name, byPhase);
      byPhase.set(phase, Math.max(byPhase.get(phase) ?? 0, mb));
    }
  };
  const timer = setInterval(() => void sample(), 100);
  return {
    /** Later samples count towards `name`. */
    phase(name: string) {
      phase = name;
    },
    /** Stops sampling; each process's peak by phase, in MB. */
    async stop(): Promise<Map<string, Map<string, number>>> {
      clearInterval(timer);
      await sample();
      return peaks;
    },
  };
}

export interface Rate {
  title: string;
  perSecond: number;
  p50?: number;
  p99?: number;
  /** Answers other than the expected status, errors and timeouts. */
  bad: number;
}

export const fromAutocannon = (title: string, result: autocannon.Result): Rate => ({
  title,
  perSecond: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  bad: result.non2xx + result.errors + result.timeouts,
});

export function formatRate(rate: Rate): string {
  const latency =
    rate.p50 === undefined
      ? ''.padEnd(30)
      : `p50 ${String(rate.p50).padStart(4)} ms   p99 ${String(rate.p99).padStart(4)} ms`;
  const bad = rate.bad > 0 ? `  (${rate.bad} failed)` : '';
  return `${rate.title.padEnd(52)} ${rate.perSecond.toFixed(1).padStart(8)} /s   ${latency}${bad}`;
}

/** The better of two runs by rate: shared machines have slow moments; each side gets two tries. */
export const best = (a: Rate, b: Rate): Rate => (b.perSecond > a.perSecond ? b : a);
