import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { projectRoot } from '../project-root.js';
import { grantApplicationRole, roleOf, type ApplicationRoleGrant } from './roles.js';

export const migrationsFolder = join(projectRoot, 'drizzle');

// Any fixed 64-bit number: every process that migrates takes the same lock, so two migrate
// commands started together apply each migration exactly once (and grant one after the other).
const MIGRATION_LOCK = 0x656d6264637264n;

export interface MigrationTargets {
  /** The owner's connection: it creates, alters and drops tables (MIGRATION_DATABASE_URL). */
  ownerUrl: string;
  /**
   * The application's connection (DATABASE_URL): its role is created when missing (with this
   * URL's password, if the owner may create roles) and granted what the API and the worker need.
   * Omitted, or naming the owner itself, nothing is granted.
   */
  appUrl?: string;
}

export interface MigrationOutcome {
  /** Migrations this run applied (0 when the database was current). */
  applied: number;
  /** The latest migration, now applied. */
  latest: string;
  grant: ApplicationRoleGrant | undefined;
}

/**
 * Applies the SQL migrations in `drizzle/` that this database has not seen yet, as the owner,
 * then grants the application's role its rows (what `npm run db:migrate` runs). The API and the
 * worker never run this: they check at start that it ran ({@link assertMigrated}).
 */
export async function migrateDatabase(targets: MigrationTargets): Promise<MigrationOutcome> {
  const sql = postgres(targets.ownerUrl, { max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK.toString()}::bigint)`;
    try {
      const before = await appliedCount(sql);
      await migrate(drizzle(sql), { migrationsFolder });
      const after = await appliedCount(sql);
      const grant =
        targets.appUrl && roleOf(targets.appUrl) !== roleOf(targets.ownerUrl)
          ? await grantApplicationRole(sql, targets.appUrl)
          : undefined;
      return { applied: after - before, latest: (await latestMigration()).tag, grant };
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK.toString()}::bigint)`;
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Migrations only, as the owner (benchmarks that run everything as the owner). */
export async function runMigrations(ownerUrl: string): Promise<void> {
  await migrateDatabase({ ownerUrl });
}

async function appliedCount(sql: postgres.Sql): Promise<number> {
  const [table] = await sql<[{ exists: boolean }]>`
    select to_regclass('drizzle.__drizzle_migrations') is not null as exists`;
  if (!table.exists) return 0;
  const [count] = await sql<[{ n: number }]>`
    select count(*)::int as n from drizzle.__drizzle_migrations`;
  return count.n;
}

interface JournalEntry {
  tag: string;
  when: number;
}

let journal: Promise<JournalEntry> | undefined;

/** The newest migration this code ships (drizzle/meta/_journal.json's last entry). */
export function latestMigration(): Promise<JournalEntry> {
  journal ??= readFile(join(migrationsFolder, 'meta/_journal.json'), 'utf8').then((text) => {
    const entries = (JSON.parse(text) as { entries: JournalEntry[] }).entries;
    const last = entries.at(-1);
    if (!last) throw new Error(`${migrationsFolder}/meta/_journal.json lists no migration`);
    return last;
  });
  return journal;
}

export const MIGRATE_COMMAND =
  '`npm run db:migrate` (from the image: `node dist/src/main/migrate.js`) with MIGRATION_DATABASE_URL';

/**
 * What the API and the worker check at start instead of migrating: the newest migration this
 * code ships is applied (drizzle records each by its journal time; a database ahead of the code,
 * mid-deploy, is fine). Throws, saying to run the migrate command, when it is not.
 */
export async function assertMigrated(sql: postgres.Sql): Promise<void> {
  const latest = await latestMigration();
  let newest: number | undefined;
  try {
    const [row] = await sql<[{ at: string | null }]>`
      select max(created_at)::text as at from drizzle.__drizzle_migrations`;
    newest = row.at === null ? undefined : Number(row.at);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // No migration table (or no drizzle schema): nothing was ever migrated.
    if (code === '42P01' || code === '3F000') newest = undefined;
    else if (code === '42501')
      throw new Error(
        `This database role may not read drizzle.__drizzle_migrations: run ${MIGRATE_COMMAND} and DATABASE_URL set, which grants the application's role what it needs.`,
        { cause: error },
      );
    else throw error;
  }
  if (newest === undefined || newest < latest.when)
    throw new Error(
      `The database lacks migration ${latest.tag}${newest === undefined ? ' (it has none)' : ''}: the API and the worker do not migrate; run ${MIGRATE_COMMAND} first, then start them.`,
    );
}
