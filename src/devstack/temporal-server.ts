import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { chmod, cp, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import postgres from 'postgres';
import { allSearchAttributeKeys } from '../temporal/search-attributes.js';
import { waitUntilReady } from './server-process.js';
import {
  defaultProgress,
  goInstalled,
  resolveBinary,
  run,
  type Binary,
  type Progress,
} from './temporal-binaries.js';

/**
 * A real Temporal server (not the CLI's dev server) on PostgreSQL, the production shape of
 * Temporal, built by the project itself from the Go module proxy and cached like the other
 * binaries:
 *   - `go install go.temporal.io/server/cmd/server@v1.29.1` and `…/cmd/tools/sql@v1.29.1` (the
 *     module's go.mod has no `replace`), renamed `temporal-server` and `temporal-sql-tool`, with the
 *     PostgreSQL schema files copied from the module cache, all in
 *     ~/.cache/embedded-credit/temporal-server-1.29.1/;
 *   - the Web UI, `go install github.com/temporalio/ui-server/v2/cmd/server@v2.42.1` (the UI server
 *     Temporal CLI 1.5.1 embeds beside server 1.29.1; its assets are embedded in the binary), in
 *     ~/.cache/embedded-credit/temporal-ui-server-2.42.1/.
 * TEMPORAL_SERVER_PATH (a temporal-server with temporal-sql-tool and schema/ beside it, the cache
 * folder's layout) and TEMPORAL_UI_SERVER_PATH point at binaries of your own instead.
 */
export const TEMPORAL_SERVER_VERSION = '1.29.1';
export const TEMPORAL_UI_SERVER_VERSION = '2.42.1';

/**
 * History shards of a new cluster: the unit of history's parallelism and ownership (a workflow's
 * history lives on one shard; each shard is owned by one history host). 4 is plenty for one host
 * and leaves room to spread over a few. Fixed when the databases are first set up: a later start
 * with another count keeps the recorded one (the server logs a warning and ignores the config).
 */
export const DEFAULT_HISTORY_SHARDS = 4;

const SERVER_MODULE = 'go.temporal.io/server';
const SCHEMA_PATH = ['schema', 'postgresql', 'v12'];

export interface TemporalServerInstall {
  /** The `temporal-server` executable. */
  server: string;
  /** The `temporal-sql-tool` executable. */
  sqlTool: string;
  /** `…/schema/postgresql/v12`, holding `temporal/` and `visibility/` (each with `versioned/`). */
  schemaDir: string;
  /** Where it came from, for the start-up banner. */
  source: string;
}

const temporalServerBinary: Binary = {
  what: `Temporal server ${TEMPORAL_SERVER_VERSION}`,
  envVar: 'TEMPORAL_SERVER_PATH',
  folder: `temporal-server-${TEMPORAL_SERVER_VERSION}`,
  artifact: 'temporal-server',
  buildLabel: 'go install',
  async build(tmp, progress) {
    const version = `v${TEMPORAL_SERVER_VERSION}`;
    const packages = [`${SERVER_MODULE}/cmd/server`, `${SERVER_MODULE}/cmd/tools/sql`];
    progress(
      `building the Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL tool with go install (first run only, about 3 minutes)…`,
    );
    // One `go install` of two packages of the same module version: one module download, one link each.
    await run('go', ['install', ...packages.map((p) => `${p}@${version}`)], {
      env: { ...process.env, GOBIN: tmp, CGO_ENABLED: '0' },
      progress,
    });
    await rename(join(tmp, 'sql'), join(tmp, 'temporal-sql-tool'));
    // The schema files ship in the module the binaries were built from (now in the module cache).
    const { stdout } = await promisify(execFile)('go', ['env', 'GOMODCACHE']);
    const moduleDir = join(stdout.trim(), `${SERVER_MODULE}@${version}`);
    const goMod = await readFile(join(moduleDir, 'go.mod'), 'utf8');
    if (/^\s*replace\b/m.test(goMod)) {
      progress(`note: ${SERVER_MODULE}@${version}'s go.mod has replace directives`);
    }
    for (const store of ['temporal', 'visibility']) {
      await cp(join(moduleDir, ...SCHEMA_PATH, store), join(tmp, ...SCHEMA_PATH, store), {
        recursive: true,
      });
    }
    // The module cache is read-only; the copy must not be, so the folder can be deleted.
    await makeWritable(join(tmp, 'schema'));
    await writeFile(
      join(tmp, 'VERSION'),
      [
        `temporal-server and temporal-sql-tool ${TEMPORAL_SERVER_VERSION}: go install ${packages.map((p) => `${p}@${version}`).join(' ')}`,
        `schema/postgresql/v12 copied from ${moduleDir}`,
        `built ${new Date().toISOString()} with ${(await promisify(execFile)('go', ['version'])).stdout.trim()}`,
        '',
      ].join('\n'),
    );
    // The artifact last: its presence is the cache's "complete" mark (the folder is renamed in
    // whole, too, so a failed build leaves nothing behind).
    await rename(join(tmp, 'server'), join(tmp, 'temporal-server'));
  },
  help: [
    'set TEMPORAL_SERVER_PATH to a temporal-server binary with temporal-sql-tool and schema/postgresql/v12 beside it, or',
    `install Go ≥ 1.25 and let the project run: go install ${SERVER_MODULE}/cmd/server@v${TEMPORAL_SERVER_VERSION} ${SERVER_MODULE}/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
  ],
};

const temporalUiBinary = goInstalled({
  what: `Temporal UI server ${TEMPORAL_UI_SERVER_VERSION}`,
  envVar: 'TEMPORAL_UI_SERVER_PATH',
  module: `github.com/temporalio/ui-server/v2/cmd/server@v${TEMPORAL_UI_SERVER_VERSION}`,
  folder: `temporal-ui-server-${TEMPORAL_UI_SERVER_VERSION}`,
  artifact: 'server',
  duration: 'about a minute',
  orElse: 'start the cluster without its UI.',
});

/**
 * The Temporal server, its SQL tool and schema files: an explicit TEMPORAL_SERVER_PATH, else the
 * cache, else a build with `go install` (once; about 3 minutes on 2 cores).
 */
export async function resolveTemporalServer(
  progress: Progress = defaultProgress,
): Promise<TemporalServerInstall> {
  const resolved = await resolveBinary(temporalServerBinary, progress);
  if (resolved.executable.type !== 'existing-path') throw new Error('Temporal server not resolved');
  const server = resolved.executable.path;
  const folder = join(server, '..');
  const install = {
    server,
    sqlTool: join(folder, 'temporal-sql-tool'),
    schemaDir: join(folder, ...SCHEMA_PATH),
    source: resolved.source,
  };
  for (const needed of [
    install.sqlTool,
    join(install.schemaDir, 'temporal', 'versioned'),
    join(install.schemaDir, 'visibility', 'versioned'),
  ]) {
    if (!existsSync(needed)) {
      throw new Error(
        `${needed} is missing beside ${server}: the Temporal server folder needs temporal-sql-tool and schema/postgresql/v12 (delete the folder to have it rebuilt)`,
      );
    }
  }
  return install;
}

/** The Temporal Web UI server (assets embedded): TEMPORAL_UI_SERVER_PATH, else cache, else go install. */
export async function resolveTemporalUi(progress: Progress = defaultProgress): Promise<string> {
  const resolved = await resolveBinary(temporalUiBinary, progress);
  if (resolved.executable.type !== 'existing-path') throw new Error('Temporal UI not resolved');
  return resolved.executable.path;
}

export interface TemporalServerOptions {
  /** A PostgreSQL server this user may create databases on (the embedded one's superuser). */
  postgres: { host: string; port: number; user: string; password: string };
  /** Config, dynamic config, logs and the pid file (the state itself is in PostgreSQL). */
  dataDir: string;
  /** The frontend's gRPC port (the address clients use); a free one when omitted. */
  frontendPort?: number;
  /** Serve the Web UI on this port; no UI when omitted. */
  uiPort?: number;
  /**
   * The UI's Remote Codec endpoint (the API's `/ops/v1/temporal-codec`), fetched with the
   * browser's credentials (the staff session cookie the endpoint's sign-in page sets).
   */
  uiCodecEndpoint?: string;
  /** Serve the server's Prometheus metrics on this port (path /metrics); none when omitted. */
  metricsPort?: number;
  /** Registered at start with the project's search attributes. Default `default`. */
  namespace?: string;
  /** How long closed workflows are kept. Default 72 hours. */
  retentionHours?: number;
  /** Shards of a new cluster (see DEFAULT_HISTORY_SHARDS); later starts keep the first count. */
  numHistoryShards?: number;
  /** Database names on that server. Default `temporal` and `temporal_visibility`. */
  databases?: { persistence?: string; visibility?: string };
  /**
   * Connections each of the four services may open to the persistence database (half as many to
   * visibility). Default 10: at most 60 in all; about 24 open when idle.
   */
  maxConns?: number;
  /** Extra dynamic config (key → value), e.g. rate limits for a benchmark. */
  dynamicConfig?: Record<string, unknown>;
  /** The server's log level (its log goes to `<dataDir>/temporal-server.log`). Default `warn`. */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  progress?: Progress;
}

export interface RunningTemporalServer {
  /** The frontend, e.g. 127.0.0.1:7233 (TEMPORAL_ADDRESS). */
  address: string;
  namespace: string;
  /** The Web UI, when started with one. */
  uiUrl: string | undefined;
  /** The server process (a test or a bench can kill it). */
  process: ChildProcess;
  /** Its log file. */
  logFile: string;
  /** SIGTERM to the UI and the server, then waits for both to exit (SIGKILL after 30 s). */
  stop(): Promise<void>;
}

const ENVIRONMENT = 'embedded-credit';
const HOST = '127.0.0.1';

/**
 * Starts a Temporal server (frontend, history, matching and worker services in one process, each
 * on loopback) on the given PostgreSQL: creates its two databases when absent, sets up and
 * upgrades their schemas with temporal-sql-tool (a second start finds them current), writes its
 * config, starts it, waits until the frontend answers, registers the namespace and the project's
 * search attributes, and, with `uiPort`, starts the Web UI pointed at it.
 */
export async function startTemporalServer(
  options: TemporalServerOptions,
): Promise<RunningTemporalServer> {
  const progress = options.progress ?? defaultProgress;
  const install = await resolveTemporalServer(progress);
  const uiBinary = options.uiPort !== undefined ? await resolveTemporalUi(progress) : undefined;
  const namespace = options.namespace ?? 'default';
  const databases = {
    persistence: options.databases?.persistence ?? 'temporal',
    visibility: options.databases?.visibility ?? 'temporal_visibility',
  };
  const dataDir = resolve(options.dataDir);
  const configDir = join(dataDir, 'config');
  await mkdir(configDir, { recursive: true });

  await createDatabases(options.postgres, Object.values(databases));
  await setUpSchema(install, options.postgres, databases.persistence, 'temporal', progress);
  await setUpSchema(install, options.postgres, databases.visibility, 'visibility', progress);

  const uiDir = join(dataDir, 'ui');
  const pidFiles = {
    server: join(dataDir, 'temporal-server.pid'),
    ui: join(dataDir, 'temporal-ui.pid'),
  };
  await stopLeftover(pidFiles.ui, uiDir);
  await stopLeftover(pidFiles.server, dataDir);
  const ports = await servicePorts(join(dataDir, 'ports.json'), options.frontendPort);
  const frontendPort = ports.frontend;
  const address = `${HOST}:${frontendPort}`;
  const config = serverConfig({
    ...options,
    databases,
    address,
    frontendPort,
    ports,
    dynamicConfigFile: join(configDir, 'dynamicconfig.yaml'),
  });
  await writeFile(join(configDir, `${ENVIRONMENT}.yaml`), toYaml(config), { mode: 0o600 });
  await writeFile(
    join(configDir, 'dynamicconfig.yaml'),
    toYaml(
      Object.fromEntries(
        Object.entries({
          // Otherwise the frontend calls Temporal's version service on the internet every few hours.
          'frontend.enableServerVersionCheck': false,
          ...options.dynamicConfig,
        }).map(([key, value]) => [key, [{ value, constraints: {} }]]),
      ),
    ),
  );

  const logFile = join(dataDir, 'temporal-server.log');
  const server = await startProcess(
    'Temporal server',
    install.server,
    dataDir,
    logFile,
    pidFiles.server,
  );
  let ui: StartedProcess | undefined;
  const stop = async () => {
    await ui?.stop();
    await server.stop();
  };
  try {
    const alive = () => server.child.exitCode === null && server.child.signalCode === null;
    await Promise.race([waitForFrontend(address, alive), server.exited]);
    await Promise.race([
      registerNamespace(address, namespace, options, progress, alive),
      server.exited,
    ]);

    let uiUrl: string | undefined;
    if (uiBinary && options.uiPort !== undefined) {
      await mkdir(join(uiDir, 'config'), { recursive: true });
      await writeFile(
        join(uiDir, 'config', `${ENVIRONMENT}.yaml`),
        toYaml(uiConfig(address, options.uiPort, namespace, options.uiCodecEndpoint)),
      );
      ui = await startProcess(
        'Temporal UI',
        uiBinary,
        uiDir,
        join(dataDir, 'temporal-ui.log'),
        pidFiles.ui,
      );
      uiUrl = `http://localhost:${options.uiPort}`;
      const healthz = `http://${HOST}:${options.uiPort}/healthz`;
      await Promise.race([
        waitUntilReady('Temporal UI', healthz, async () => (await fetch(healthz)).ok),
        ui.exited,
      ]);
    }
    return { address, namespace, uiUrl, process: server.child, logFile, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

interface ServerConfigInput extends TemporalServerOptions {
  databases: { persistence: string; visibility: string };
  address: string;
  frontendPort: number;
  ports: ServicePorts;
  dynamicConfigFile: string;
}

const servicePortNames = [
  'frontend',
  'frontendMembership',
  'history',
  'historyMembership',
  'matching',
  'matchingMembership',
  'worker',
  'workerMembership',
] as const;
type ServicePorts = Record<(typeof servicePortNames)[number], number>;

/**
 * The services' ports (gRPC and membership), kept in `ports.json` and reused by the next start
 * while they are free. Reuse matters: each service joins its ring through the members recorded in
 * PostgreSQL, and a restart on new ports finds its previous self there under the old ones, which no
 * longer answer: ringpop then retries for over 30 s, and matching answers "Not enough hosts to
 * serve the request" all that time. On the same ports the old members are itself.
 *
 * Every port is below 32768: the server records the membership port in
 * `cluster_membership.rpc_port`, a PostgreSQL SMALLINT, so a port from Linux's ephemeral range
 * (32768 and up, where the OS's free ports come from) fails the first heartbeat ("value out of
 * range for type smallint") and the server exits.
 */
async function servicePorts(file: string, frontend: number | undefined): Promise<ServicePorts> {
  let saved: Partial<ServicePorts> = {};
  try {
    saved = JSON.parse(await readFile(file, 'utf8')) as Partial<ServicePorts>;
  } catch {
    // first start
  }
  const ports: Partial<ServicePorts> = frontend !== undefined ? { frontend } : {};
  const taken = new Set<number>(frontend !== undefined ? [frontend] : []);
  for (const name of servicePortNames) {
    if (ports[name] !== undefined) continue;
    const previous = saved[name];
    let port =
      previous !== undefined && !taken.has(previous) && (await canListen(previous))
        ? previous
        : undefined;
    for (let attempt = 0; port === undefined && attempt < 500; attempt++) {
      const candidate = 20_000 + Math.floor(Math.random() * 12_768);
      if (!taken.has(candidate) && (await canListen(candidate))) port = candidate;
    }
    if (port === undefined) throw new Error('no free port between 20000 and 32767 on 127.0.0.1');
    taken.add(port);
    ports[name] = port;
  }
  await writeFile(file, `${JSON.stringify(ports, null, 2)}\n`);
  return ports as ServicePorts;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });
}

/** The server's YAML config, as the documented `development-postgres12.yaml` but on loopback only. */
function serverConfig(input: ServerConfigInput): Record<string, unknown> {
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${input.postgres.host}:${input.postgres.port}`,
      connectProtocol: 'tcp',
      user: input.postgres.user,
      password: input.postgres.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const maxConns = input.maxConns ?? 10;
  const rpc = (grpcPort: number, membershipPort: number) => ({
    rpc: { grpcPort, membershipPort, bindOnIP: HOST },
  });
  return {
    log: { stdout: true, level: input.logLevel ?? 'warn', format: 'json' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: input.numHistoryShards ?? DEFAULT_HISTORY_SHARDS,
      datastores: {
        'postgres-default': store(input.databases.persistence, maxConns),
        'postgres-visibility': store(
          input.databases.visibility,
          Math.max(2, Math.ceil(maxConns / 2)),
        ),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: HOST },
      ...(input.metricsPort
        ? {
            metrics: {
              prometheus: {
                listenAddress: `${HOST}:${input.metricsPort}`,
                handlerPath: '/metrics',
              },
            },
          }
        : {}),
    },
    services: {
      frontend: rpc(input.frontendPort, input.ports.frontendMembership),
      history: rpc(input.ports.history, input.ports.historyMembership),
      matching: rpc(input.ports.matching, input.ports.matchingMembership),
      worker: rpc(input.ports.worker, input.ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: input.address,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: {
      archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    },
    publicClient: { hostPort: input.address },
    dynamicConfigClient: { filepath: input.dynamicConfigFile, pollInterval: '10s' },
  };
}

function uiConfig(
  address: string,
  port: number,
  namespace: string,
  codecEndpoint: string | undefined,
): Record<string, unknown> {
  return {
    temporalGrpcAddress: address,
    host: HOST,
    port,
    enableUi: true,
    defaultNamespace: namespace,
    // Plain http on loopback: the CSRF cookie must not require https.
    cors: { cookieInsecure: true },
    notifyOnNewVersion: false,
    hideLogs: true,
    ...(codecEndpoint ? { codec: { endpoint: codecEndpoint, includeCredentials: true } } : {}),
  };
}

async function createDatabases(
  server: TemporalServerOptions['postgres'],
  names: string[],
): Promise<void> {
  const admin = postgres({
    host: server.host,
    port: server.port,
    user: server.user,
    password: server.password,
    database: 'postgres',
    max: 1,
    onnotice: () => {},
  });
  try {
    for (const name of names) {
      const [existing] = await admin`select 1 from pg_database where datname = ${name}`;
      if (!existing) await admin.unsafe(`create database "${name.replaceAll('"', '')}"`);
    }
  } finally {
    await admin.end();
  }
}

/**
 * `setup-schema -v 0.0` (the version tables; a no-op on a database already past 0.0), then
 * `update-schema -d <versioned dir>` to the newest version the server ships (none to apply on a
 * second start).
 */
async function setUpSchema(
  install: TemporalServerInstall,
  server: TemporalServerOptions['postgres'],
  database: string,
  store: 'temporal' | 'visibility',
  progress: Progress,
): Promise<void> {
  const common = [
    '--plugin',
    'postgres12',
    '--endpoint',
    server.host,
    '--port',
    String(server.port),
    '--user',
    server.user,
    '--database',
    database,
  ];
  // The password through the environment, not the command line other users can read.
  const env = { ...process.env, SQL_PASSWORD: server.password };
  const quiet: Progress = () => {};
  try {
    await run(install.sqlTool, [...common, 'setup-schema', '-v', '0.0'], { env, progress: quiet });
    const versioned = join(install.schemaDir, store, 'versioned');
    await run(install.sqlTool, [...common, 'update-schema', '-d', versioned], {
      env,
      progress: quiet,
    });
    progress(
      `Temporal ${store} schema in database ${database}: current (${await newest(versioned)})`,
    );
  } catch (error) {
    throw new Error(
      `temporal-sql-tool could not set up the ${store} schema in ${database}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

/** The newest `vX.Y` folder of a versioned schema directory. */
async function newest(versioned: string): Promise<string> {
  const versions = (await readdir(versioned)).filter((name) => /^v\d+\.\d+$/.test(name));
  const key = (v: string) => v.slice(1).split('.').map(Number) as [number, number];
  versions.sort((a, b) => key(a)[0] - key(b)[0] || key(a)[1] - key(b)[1]);
  return versions.at(-1) ?? 'none';
}

async function waitForFrontend(address: string, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (alive()) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000 });
      try {
        const { status } = await connection.healthService.check({});
        // 1 = SERVING (grpc.health.v1.HealthCheckResponse.ServingStatus)
        if (Number(status) === 1) return;
      } finally {
        await connection.close();
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`Temporal server did not answer on ${address} within 90 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** gRPC status codes used below. */
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;

/** IndexedValueType numbers (temporal.api.enums.v1), by the SDK's search attribute type names. */
const indexedValueTypes = {
  TEXT: 1,
  KEYWORD: 2,
  INT: 3,
  DOUBLE: 4,
  BOOL: 5,
  DATETIME: 6,
  KEYWORD_LIST: 7,
} as const;

/**
 * Registers the namespace (kept if present) and the project's search attributes (only those
 * missing), then waits until a list query naming every attribute is accepted: the frontend knows
 * them once its namespace cache has refreshed (every 2 s).
 */
async function registerNamespace(
  address: string,
  namespace: string,
  options: TemporalServerOptions,
  progress: Progress,
  alive: () => boolean,
): Promise<void> {
  const retrying = <T>(what: string, call: () => Promise<T>) => retry(what, call, alive);
  const connection = await Connection.connect({ address });
  try {
    const retention = msToTs(`${options.retentionHours ?? 72}h`);
    let created = false;
    await retrying('register the namespace', async () => {
      try {
        await connection.workflowService.registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: retention,
          description: 'embedded-credit',
        });
        created = true;
      } catch (error) {
        if ((error as { code?: number }).code !== ALREADY_EXISTS) throw error;
      }
    });
    if (created) progress(`Temporal namespace ${namespace} registered`);

    const missing = await retrying('list the search attributes', async () => {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({
        namespace,
      });
      return allSearchAttributeKeys.filter((key) => !(key.name in (customAttributes ?? {})));
    });
    if (missing.length > 0) {
      await retrying('add the search attributes', () =>
        connection.operatorService.addSearchAttributes({
          namespace,
          searchAttributes: Object.fromEntries(
            missing.map((key) => [key.name, indexedValueTypes[key.type]]),
          ),
        }),
      );
      progress(`search attributes registered: ${missing.map((key) => key.name).join(', ')}`);
    }

    const query = allSearchAttributeKeys
      .map((key) => `${key.name} = ${probeValue(key.type)}`)
      .join(' AND ');
    await retrying('list workflows by the search attributes', () =>
      connection.workflowService.listWorkflowExecutions({ namespace, query, pageSize: 1 }),
    );
    // Every service has its own namespace cache: give the others one refresh past the frontend's.
    if (created || missing.length > 0) await new Promise((resolve) => setTimeout(resolve, 2_500));

    // The frontend answers before history and matching have formed their rings: a call that
    // reaches each of them (a missing workflow is NOT_FOUND from history; a task queue's
    // description comes from matching) says the server really serves.
    await retrying('reach the history service', async () => {
      try {
        await connection.workflowService.describeWorkflowExecution({
          namespace,
          execution: { workflowId: `readiness-probe/${Date.now()}` },
        });
      } catch (error) {
        if ((error as { code?: number }).code !== NOT_FOUND) throw error;
      }
    });
    await retrying('reach the matching service', () =>
      connection.workflowService.describeTaskQueue({
        namespace,
        taskQueue: { name: 'readiness-probe' },
      }),
    );
  } finally {
    await connection.close();
  }
}

function probeValue(type: keyof typeof indexedValueTypes): string {
  switch (type) {
    case 'INT':
    case 'DOUBLE':
      return '0';
    case 'BOOL':
      return 'true';
    case 'DATETIME':
      return '"2000-01-01T00:00:00Z"';
    default:
      return '"probe"';
  }
}

/** Retries `call` for up to 90 s: a fresh server takes a moment to own its shards and namespaces. */
async function retry<T>(what: string, call: () => Promise<T>, alive: () => boolean): Promise<T> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (Date.now() > deadline || !alive()) {
        throw new Error(
          `Temporal server: could not ${what} within 90 s: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

interface StartedProcess {
  child: ChildProcess;
  exited: Promise<never>;
  stop(): Promise<void>;
}

/**
 * Spawns `<command> --root <root> --config config --env embedded-credit start` (the Temporal server
 * and the UI server take the same flags), its output appended to `logFile` and the tail kept for
 * an early exit's error, its pid in `pidFile` until it is stopped.
 */
async function startProcess(
  what: string,
  command: string,
  root: string,
  logFile: string,
  pidFile: string,
): Promise<StartedProcess> {
  const args = ['--root', root, '--config', 'config', '--env', ENVIRONMENT, 'start'];
  const child = spawn(command, args, {
    // No version check from this process either (also off in the dynamic config).
    env: { ...process.env, TEMPORAL_VERSION_CHECK_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logFile, { flags: 'a' });
  let tail = '';
  const keep = (chunk: Buffer) => {
    log.write(chunk);
    tail = (tail + chunk.toString()).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const gone = new Promise<void>((resolve) =>
    child.once('exit', () => {
      log.end();
      resolve();
    }),
  );
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(
        new Error(
          `${what} exited (${signal ?? `code ${code}`}) before it was ready; the end of ${logFile}:\n${tail.trim()}`,
        ),
      ),
    ),
  );
  exited.catch(() => {});
  child.once('error', (error) => keep(Buffer.from(`${command}: ${error.message}\n`)));
  if (child.pid !== undefined) await writeFile(pidFile, `${child.pid}\n`);
  return {
    child,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        // Temporal drains its services in turn; 30 s is well past what it needs on loopback.
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await gone;
        clearTimeout(timer);
      }
      await rm(pidFile, { force: true });
    },
  };
}

/**
 * A server left running by a killed parent holds its ports: stop it, if the pid file names a
 * process still running with this very `--root` (never anything else).
 */
async function stopLeftover(pidFile: string, root: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).trim());
  if (!Number.isInteger(pid) || pid <= 0) return;
  let commandLine: string[];
  try {
    commandLine = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
  } catch {
    return; // gone (or no /proc to tell): nothing of ours to stop
  }
  const rootAt = commandLine.indexOf('--root');
  if (rootAt < 0 || commandLine[rootAt + 1] !== root) return;
  process.kill(pid, 'SIGTERM');
  for (let waited = 0; waited < 30_000 && existsSync(`/proc/${pid}`); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (existsSync(`/proc/${pid}`)) process.kill(pid, 'SIGKILL');
  await rm(pidFile, { force: true });
}

/** Makes a copied tree owner-writable (the Go module cache is read-only). */
async function makeWritable(path: string): Promise<void> {
  const info = await stat(path);
  await chmod(path, info.mode | 0o200);
  if (info.isDirectory()) {
    for (const entry of await readdir(path)) await makeWritable(join(path, entry));
  }
}

/** A small YAML writer for the configs above: nested maps, lists, strings, numbers, booleans. */
export function toYaml(value: unknown, indent = ''): string {
  const scalar = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : String(v));
  const isEmptyObject = (v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
  const isNested = (v: unknown) =>
    typeof v === 'object' && v !== null && !isEmptyObject(v) && (!Array.isArray(v) || v.length > 0);
  const inline = (v: unknown) => (isEmptyObject(v) ? '{}' : Array.isArray(v) ? '[]' : scalar(v));
  if (Array.isArray(value)) {
    return value
      .map((item) => {
        if (!isNested(item)) return `${indent}- ${inline(item)}\n`;
        const body = toYaml(item, `${indent}  `);
        return `${indent}- ${body.slice(indent.length + 2)}`;
      })
      .join('');
  }
  return Object.entries(value as Record<string, unknown>)
    .map(([key, item]) =>
      isNested(item)
        ? `${indent}${key}:\n${toYaml(item, `${indent}  `)}`
        : `${indent}${key}: ${inline(item)}\n`,
    )
    .join('');
}
