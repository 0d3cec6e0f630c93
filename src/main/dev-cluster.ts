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
import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { keptSecrets, startCluster, type RunningCluster } from '../devstack/cluster.js';
import { isSupervisor, relayToSupervisor } from '../devstack/own-process-group.js';
import { TEMPORAL_SERVER_VERSION } from '../devstack/temporal-server.js';
import { projectRoot } from '../project-root.js';

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

let cluster: RunningCluster | undefined;
let stopping = false;
/** Ctrl-C while starting: startCluster stops what it started and rejects. */
const starting = new AbortController();
let started: Promise<void> | undefined;

async function main(): Promise<void> {
  const started = Date.now();
  await mkdir(dataDir, { recursive: true });

  if (env.CLUSTER_SKIP_BUILD === '1') say('using dist/ as built (CLUSTER_SKIP_BUILD=1)');
  else {
    say('building the production bundle (npm run build)…');
    const built = spawnSync('npm', ['run', 'build'], { cwd: projectRoot, stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run build failed');
  }

  const secrets = await keptSecrets(dataDir);
  cluster = await startCluster({
    dataDir,
    ports,
    secrets,
    signal: starting.signal,
    progress: say,
    onUnexpectedExit: (child, code, signal) => {
      if (stopping) return;
      say(`${child.name} exited unexpectedly (${signal ?? `code ${code}`}); stopping everything.`);
      void shutdown(1);
    },
  });
  const { temporal, minio, postgres } = cluster;

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
      `  Temporal         ${temporal.address} (server ${TEMPORAL_SERVER_VERSION} on PostgreSQL, namespace ${temporal.namespace})`,
      `  Temporal UI      ${temporal.uiUrl ?? '(none)'}`,
      `    payloads are encrypted; to see them decoded, sign in with the ops token at`,
      `    http://localhost:${ports.apis[0]}/ops/v1/temporal-codec (the UI is wired to it, credentials included)`,
      `  MinIO console    ${minio.console ?? '(none)'}   (root: user ${minio.root.accessKeyId}, password ${minio.root.secretAccessKey}; the service is ${minio.env.AWS_ACCESS_KEY_ID}, limited to its bucket)`,
      `  Mailbox          http://127.0.0.1:${ports.mailbox}`,
      `  PostgreSQL       ${postgres.url}   (the owner; the service connects as ${new URL(postgres.appUrl).username}, rows only)`,
      `  Ops token        ${secrets.OPS_TOKEN}   (this cluster's own: .data/cluster/secrets.json)`,
      '',
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

async function shutdown(exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  say('stopping…');
  starting.abort();
  // The APIs first (no new work), then the workers (they finish their tasks), then the servers;
  // a start still under way stops what it started itself.
  await started?.catch(() => {});
  await cluster?.stop();
  say('stopped.');
  process.exit(exitCode);
}

// Ctrl-C reaches the supervisor alone (src/devstack/own-process-group.ts, as under `npm run dev`),
// which stops the APIs and the workers before the servers they use, so nothing logs errors about
// a server gone.
if (isSupervisor()) {
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  process.on('SIGHUP', () => void shutdown(0));
  process.once('disconnect', () => void shutdown(0));
  started = main();
  started.catch(async (error: unknown) => {
    if (stopping) return;
    console.error(
      `\n[cluster] could not start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    // startCluster stopped what it had started before throwing.
    await shutdown(1);
  });
} else {
  relayToSupervisor(join(projectRoot, 'src/main/dev-cluster.ts'), projectRoot);
}
