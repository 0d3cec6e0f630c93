import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { migrationsFolder } from '../db/migrate.js';

interface JournalEntry {
  tag: string;
  when: number;
}

/** The migrations this release ships (drizzle/meta/_journal.json), oldest first. */
export async function shippedMigrations(): Promise<JournalEntry[]> {
  const text = await readFile(join(migrationsFolder, 'meta/_journal.json'), 'utf8');
  return (JSON.parse(text) as { entries: JournalEntry[] }).entries;
}

/**
 * The newest migration applied to a database: drizzle records each by its journal time
 * (`created_at`), which names the migration when this release ships it, and null when the
 * database was migrated by a newer release (or never).
 */
export async function appliedMigration(
  url: string,
): Promise<{ createdAt: number | null; tag: string | null }> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<[{ at: string | null }]>`
      select max(created_at)::text as at from drizzle.__drizzle_migrations`;
    const createdAt = row.at === null ? null : Number(row.at);
    const tag = (await shippedMigrations()).find((entry) => entry.when === createdAt)?.tag ?? null;
    return { createdAt, tag };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
