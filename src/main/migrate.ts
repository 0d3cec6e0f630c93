/**
 * `npm run db:migrate` (from the image: `node dist/src/main/migrate.js`): applies the migrations
 * as the owner role (MIGRATION_DATABASE_URL) and grants the application's role (DATABASE_URL's
 * user, created when missing) row access only. Run before starting the API and the worker, which
 * check that it ran and do not migrate. Safe to run again, and from several places at once.
 */
import { migrateDatabase } from '../db/migrate.js';
import { migrationTargets } from '../db/migration-targets.js';

const resolved = migrationTargets(process.env);
if (resolved.problems) {
  console.error(
    `Cannot migrate:\n${resolved.problems.map((problem) => `  - ${problem}`).join('\n')}`,
  );
  process.exit(78);
}
try {
  const started = Date.now();
  const outcome = await migrateDatabase(resolved.targets);
  const grant = outcome.grant
    ? `; role ${outcome.grant.role}${outcome.grant.created ? ' created and' : ''} granted row access`
    : '; no application role granted (DATABASE_URL names the owner, or is unset)';
  console.log(
    `migrated: ${outcome.applied} applied, latest ${outcome.latest}${grant} (${Date.now() - started} ms)`,
  );
} catch (error) {
  console.error(`migration failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
