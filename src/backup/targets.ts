import { migrationTargets } from '../db/migration-targets.js';
import type { ObjectStoreTarget } from './object-store.js';

/**
 * Where `npm run backup` reads from and `npm run restore` writes to, from the environment the
 * migrate command and the worker already have:
 * - the application's database as its owner (MIGRATION_DATABASE_URL; in development DATABASE_URL
 *   alone will do, as for migrating) — the restore also grants DATABASE_URL's role, as migrating does;
 * - Temporal's two databases when Temporal runs on PostgreSQL (TEMPORAL_DATABASE_URL and
 *   TEMPORAL_VISIBILITY_DATABASE_URL, as the `temporal` role; both or neither);
 * - the object store (S3_ENDPOINT, S3_BUCKET, S3_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY):
 *   the application's own user reads and writes every object, which is all either needs.
 */
export interface BackupTargets {
  ownerUrl: string;
  /** The application's role, granted after a restore; absent when it is the owner. */
  appUrl?: string;
  temporal?: { persistenceUrl: string; visibilityUrl: string };
  objectStore: ObjectStoreTarget;
}

export function backupTargets(
  env: NodeJS.ProcessEnv,
): { targets: BackupTargets; problems?: undefined } | { problems: string[] } {
  const problems: string[] = [];
  const database = migrationTargets(env);
  if (database.problems) problems.push(...database.problems);

  const persistenceUrl = env.TEMPORAL_DATABASE_URL;
  const visibilityUrl = env.TEMPORAL_VISIBILITY_DATABASE_URL;
  for (const [name, value] of [
    ['TEMPORAL_DATABASE_URL', persistenceUrl],
    ['TEMPORAL_VISIBILITY_DATABASE_URL', visibilityUrl],
  ] as const) {
    if (value && !/^postgres(ql)?:\/\//.test(value))
      problems.push(`${name}: not a postgres:// URL`);
  }
  if (Boolean(persistenceUrl) !== Boolean(visibilityUrl))
    problems.push(
      'TEMPORAL_DATABASE_URL and TEMPORAL_VISIBILITY_DATABASE_URL: set both (Temporal on PostgreSQL) or neither (the dev server)',
    );

  const endpoint = env.S3_ENDPOINT;
  if (!endpoint) problems.push("S3_ENDPOINT: required (mc needs the object store's address)");
  else if (!/^https?:\/\//.test(endpoint)) problems.push('S3_ENDPOINT: not an http(s) URL');
  for (const name of ['S3_BUCKET', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] as const)
    if (!env[name]) problems.push(`${name}: required`);

  if (problems.length > 0 || database.problems) return { problems };
  return {
    targets: {
      ownerUrl: database.targets.ownerUrl,
      ...(database.targets.appUrl ? { appUrl: database.targets.appUrl } : {}),
      ...(persistenceUrl && visibilityUrl ? { temporal: { persistenceUrl, visibilityUrl } } : {}),
      objectStore: {
        endpoint: endpoint!,
        bucket: env.S3_BUCKET!,
        region: env.S3_REGION ?? 'us-east-1',
        accessKeyId: env.AWS_ACCESS_KEY_ID!,
        secretAccessKey: env.AWS_SECRET_ACCESS_KEY!,
      },
    },
  };
}
