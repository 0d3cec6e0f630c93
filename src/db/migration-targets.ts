import { roleOf } from './roles.js';
import type { MigrationTargets } from './migrate.js';

/**
 * Where the migrate command connects, from its environment: MIGRATION_DATABASE_URL (the owner),
 * and DATABASE_URL (the application's role, which it grants). In development and tests
 * (`NODE_ENV`), DATABASE_URL alone will do: the app's own role then migrates, as before. Elsewhere
 * (`NODE_ENV` unset means production, as for the API) both are required and must name two roles.
 * Returns the list of problems instead when there are any.
 */
export function migrationTargets(
  env: NodeJS.ProcessEnv,
): { targets: MigrationTargets; problems?: undefined } | { problems: string[] } {
  const development = env.NODE_ENV === 'development' || env.NODE_ENV === 'test';
  const owner = env.MIGRATION_DATABASE_URL;
  const app = env.DATABASE_URL;
  const problems: string[] = [];
  for (const [name, value] of [
    ['MIGRATION_DATABASE_URL', owner],
    ['DATABASE_URL', app],
  ] as const) {
    if (value && !/^postgres(ql)?:\/\//.test(value))
      problems.push(`${name}: not a postgres:// URL`);
  }
  if (!development) {
    if (!owner)
      problems.push(
        'MIGRATION_DATABASE_URL: required outside development (the owner role that migrates)',
      );
    if (!app)
      problems.push(
        "DATABASE_URL: required outside development (the application's role, which the migrate command grants)",
      );
    if (owner && app && problems.length === 0 && roleOf(owner) === roleOf(app))
      problems.push(
        `DATABASE_URL and MIGRATION_DATABASE_URL name the same role (${roleOf(app)}): the API and the worker must not connect as the owner`,
      );
  } else if (!owner && !app) {
    problems.push('MIGRATION_DATABASE_URL or DATABASE_URL: one is required');
  }
  if (problems.length > 0) return { problems };
  return owner
    ? { targets: { ownerUrl: owner, ...(app ? { appUrl: app } : {}) } }
    : { targets: { ownerUrl: app! } };
}
