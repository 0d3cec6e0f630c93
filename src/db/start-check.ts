import type postgres from 'postgres';
import type { Logger } from '../logger.js';
import { assertMigrated } from './migrate.js';
import { excessPrivileges } from './roles.js';

/**
 * What the API and the worker check before they start, having migrated nothing themselves: the
 * schema is current (else: run the migrate command), and their role reads and writes rows only.
 * A role that could change the schema stops them in production and is a warning elsewhere.
 */
export async function checkDatabaseAtStart(
  sql: postgres.Sql,
  nodeEnv: 'development' | 'test' | 'production',
  logger: Logger,
): Promise<void> {
  await assertMigrated(sql);
  const excess = await excessPrivileges(sql);
  if (excess.length === 0) return;
  if (nodeEnv === 'production')
    throw new Error(
      `DATABASE_URL's role may change the schema (${excess.join('; ')}): connect the API and the worker as the application role, which the migrate command grants row access only (it connects as the owner with MIGRATION_DATABASE_URL).`,
    );
  logger.warn({ excess }, 'the database role may change the schema (refused in production)');
}
