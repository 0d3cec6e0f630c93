import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { projectRoot } from '../project-root.js';

export const migrationsFolder = join(projectRoot, 'drizzle');

// Any fixed 64-bit number: every process that migrates takes the same lock, so an API and a worker
// starting together apply each migration exactly once.
const MIGRATION_LOCK = 0x656d6264637264n;

/** Applies the SQL migrations in `drizzle/` that this database has not seen yet. */
export async function runMigrations(databaseUrl: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK.toString()}::bigint)`;
    try {
      await migrate(drizzle(sql), { migrationsFolder });
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK.toString()}::bigint)`;
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}
