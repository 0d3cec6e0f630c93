import { describe, expect, it } from 'vitest';
import { migrationTargets } from '../../src/db/migration-targets.js';
import { developmentAppUrl } from '../../src/db/roles.js';

const owner = 'postgres://owner:secret@db.internal:5432/embedded_credit';
const app = 'postgres://embedded_credit_app:other@db.internal:5432/embedded_credit';

describe('where the migrate command connects', () => {
  it('as MIGRATION_DATABASE_URL, granting DATABASE_URL’s role', () => {
    expect(
      migrationTargets({
        NODE_ENV: 'production',
        MIGRATION_DATABASE_URL: owner,
        DATABASE_URL: app,
      }),
    ).toEqual({ targets: { ownerUrl: owner, appUrl: app } });
  });

  it('in development, as DATABASE_URL alone when no owner is named', () => {
    expect(migrationTargets({ NODE_ENV: 'development', DATABASE_URL: app })).toEqual({
      targets: { ownerUrl: app },
    });
    expect(migrationTargets({ NODE_ENV: 'test', DATABASE_URL: app })).toEqual({
      targets: { ownerUrl: app },
    });
  });

  it('outside development (NODE_ENV unset too), only with both, naming two roles', () => {
    expect(migrationTargets({ DATABASE_URL: app })).toEqual({
      problems: [
        'MIGRATION_DATABASE_URL: required outside development (the owner role that migrates)',
      ],
    });
    expect(migrationTargets({ NODE_ENV: 'production', MIGRATION_DATABASE_URL: owner })).toEqual({
      problems: [
        "DATABASE_URL: required outside development (the application's role, which the migrate command grants)",
      ],
    });
    expect(
      migrationTargets({
        NODE_ENV: 'production',
        MIGRATION_DATABASE_URL: owner,
        DATABASE_URL: owner.replace('secret', 'other'),
      }).problems,
    ).toEqual([
      'DATABASE_URL and MIGRATION_DATABASE_URL name the same role (owner): the API and the worker must not connect as the owner',
    ]);
    expect(migrationTargets({ NODE_ENV: 'development' }).problems).toEqual([
      'MIGRATION_DATABASE_URL or DATABASE_URL: one is required',
    ]);
    expect(
      migrationTargets({ NODE_ENV: 'development', DATABASE_URL: 'mysql://x' }).problems,
    ).toEqual(['DATABASE_URL: not a postgres:// URL']);
  });

  it('the development application role: the owner’s server and database, its own user', () => {
    expect(developmentAppUrl('postgres://postgres:postgres@127.0.0.1:5433/embedded_credit')).toBe(
      'postgres://embedded_credit_app:embedded-credit-app-dev@127.0.0.1:5433/embedded_credit',
    );
  });
});
