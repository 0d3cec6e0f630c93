import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema/index.js';

export type Db = PostgresJsDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Query functions take either the pool or an open transaction. */
export type DbOrTx = Db | Tx;

export interface Database {
  readonly url: string;
  readonly db: Db;
  readonly sql: postgres.Sql;
  close(): Promise<void>;
}

export function createDatabase(url: string, options: { max?: number } = {}): Database {
  const sql = postgres(url, {
    max: options.max ?? 10,
    // A server restarting must not hold a request past its budget (the default is 30 s).
    connect_timeout: 5,
    // No array types are read or sent, and the driver's fetch of them on each new connection
    // drops its promise: a server restarting under it killed the process with an unhandled
    // rejection and failed the first query after the reconnect (porsager/postgres#1192, #1223).
    fetch_types: false,
    onnotice: () => {},
    connection: { application_name: 'embedded-credit' },
  });
  const db = drizzle(sql, { schema, casing: 'snake_case' });
  return { url, db, sql, close: () => sql.end({ timeout: 5 }) };
}

/** True when a trivial query answers within the timeout. */
export async function databaseReachable(database: Database, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      database.sql`select 1`,
      new Promise(
        (_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), timeoutMs)),
      ),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
