import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import postgres from 'postgres';
import type { PostgresClientTools } from '../devstack/postgres-client-tools.js';

const execFileAsync = promisify(execFile);

/**
 * pg_dump and pg_restore with the database's URL minus its password, which goes in PGPASSWORD:
 * a password on the command line would show in every `ps` of the machine.
 */
function connection(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  return {
    dbname: parsed.toString(),
    env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) },
  };
}

async function runTool(path: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  try {
    await execFileAsync(path, args, { env, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    const name = path.split('/').at(-1);
    throw new Error(`${name} failed: ${stderr || (error as Error).message}`, { cause: error });
  }
}

/** The whole database in pg_dump's custom format (one consistent snapshot, compressed). */
export async function dumpDatabase(
  tools: PostgresClientTools,
  url: string,
  file: string,
): Promise<void> {
  const { dbname, env } = connection(url);
  await runTool(
    tools.pgDump,
    ['--format=custom', '--no-password', `--file=${file}`, `--dbname=${dbname}`],
    env,
  );
}

/**
 * Restores a custom-format dump into an empty database, in one transaction that stops at the
 * first error (nothing half-restored), owned by the connecting role and with no grants: roles
 * are the new server's, granted afterwards (the migrate command's grants, for the application).
 */
export async function restoreDatabase(
  tools: PostgresClientTools,
  url: string,
  file: string,
): Promise<void> {
  const { dbname, env } = connection(url);
  await runTool(
    tools.pgRestore,
    [
      '--no-owner',
      '--no-privileges',
      '--exit-on-error',
      '--single-transaction',
      '--no-password',
      `--dbname=${dbname}`,
      file,
    ],
    env,
  );
}

export async function toolVersion(path: string): Promise<string> {
  const { stdout } = await execFileAsync(path, ['--version']);
  return stdout.trim();
}

export interface DatabaseFacts {
  /** `server_version_num`, e.g. 180004. */
  serverVersion: number;
  database: string;
  /** Tables, views and sequences outside PostgreSQL's own schemas. */
  relations: number;
}

export async function databaseFacts(url: string): Promise<DatabaseFacts> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<[{ version: number; database: string; relations: number }]>`
      select current_setting('server_version_num')::int as version,
        current_database() as database,
        (select count(*)::int from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast')
            and n.nspname not like 'pg_temp%' and n.nspname not like 'pg_toast_temp%'
            and c.relkind in ('r', 'p', 'v', 'm', 'S')) as relations`;
    return { serverVersion: row.version, database: row.database, relations: row.relations };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export const majorOf = (serverVersion: number) => Math.floor(serverVersion / 10_000);
