import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { migrateDatabase } from '../db/migrate.js';
import type { BackupTools } from './backup.js';
import {
  MANIFEST_FILE,
  OBJECTS_FOLDER,
  OBJECTS_LIST,
  readManifest,
  type Manifest,
} from './manifest.js';
import { bucketIsEmpty, listFiles, mirrorIn, sha256OfFile } from './object-store.js';
import { shippedMigrations } from './migrations.js';
import { databaseFacts, majorOf, restoreDatabase } from './postgres.js';
import type { BackupTargets } from './targets.js';

export interface RestoreOutcome {
  manifest: Manifest;
  /** Outbox rows marked started after Temporal's snapshot, handed back to the sweeper. */
  workflowStartsRedriven: number;
  /** Loans changed after Temporal's snapshot: their workflows may be behind them (the runbook). */
  loansChangedAfterTemporal: string[];
}

/**
 * Restores the backup in `folder` into empty targets, after checking everything it can before it
 * writes anything: the manifest, every checksum, that each target is empty and of a PostgreSQL
 * major at least the source's, and that Temporal's targets are given exactly when the backup
 * holds Temporal. Then Temporal's databases, the application's (with the migrate command's
 * migrations and grants, so a newer release restores an older backup), the outbox's re-drive
 * (docs/operations/backups.md), and the objects.
 */
export async function restoreBackup(
  targets: BackupTargets,
  tools: BackupTools,
  folder: string,
  progress: (line: string) => void,
): Promise<RestoreOutcome> {
  const manifest = await readManifest(folder);
  await verifyChecksums(folder, manifest);
  progress(
    `checksums match (${manifest.databases.length} dumps, ${manifest.objectStore.objects} objects)`,
  );

  const shipped = await shippedMigrations();
  const dumped = manifest.service.databaseMigration.createdAt;
  if (dumped !== null && dumped > (shipped.at(-1)?.when ?? 0))
    throw new Error(
      `this backup's database has migrations this release does not ship (its newest is ${manifest.service.databaseMigration.tag ?? `from ${new Date(dumped).toISOString()}`}, taken by release ${manifest.service.version}): restore with that release or a newer one`,
    );

  const temporalParts = manifest.databases.filter((part) => part.part !== 'application');
  if (temporalParts.length > 0 && !targets.temporal)
    throw new Error(
      "this backup holds Temporal's databases: set TEMPORAL_DATABASE_URL and TEMPORAL_VISIBILITY_DATABASE_URL to the empty databases to restore them into",
    );
  if (temporalParts.length === 0 && targets.temporal)
    throw new Error(
      `this backup holds no Temporal database (${manifest.temporalNotIncluded ?? 'none taken'}): unset TEMPORAL_DATABASE_URL and TEMPORAL_VISIBILITY_DATABASE_URL`,
    );
  const urlOf = (part: Manifest['databases'][number]['part']): string =>
    part === 'application'
      ? targets.ownerUrl
      : part === 'temporal'
        ? targets.temporal!.persistenceUrl
        : targets.temporal!.visibilityUrl;

  for (const part of manifest.databases) {
    const facts = await databaseFacts(urlOf(part.part));
    if (facts.relations > 0)
      throw new Error(
        `the target of ${part.part} (database ${facts.database}) is not empty (${facts.relations} relations): a restore goes into an empty database`,
      );
    if (majorOf(facts.serverVersion) < majorOf(part.serverVersion))
      throw new Error(
        `the target of ${part.part} runs PostgreSQL ${majorOf(facts.serverVersion)}, older than the ${majorOf(part.serverVersion)} it was dumped from`,
      );
  }
  if (!(await bucketIsEmpty(targets.objectStore)))
    throw new Error(
      `the bucket ${targets.objectStore.bucket} is not empty: a restore goes into an empty bucket`,
    );

  for (const part of manifest.databases) {
    progress(`restoring ${part.part} (taken ${part.startedAt})…`);
    await restoreDatabase(tools.postgres, urlOf(part.part), join(folder, part.file));
  }
  const migrated = await migrateDatabase({
    ownerUrl: targets.ownerUrl,
    ...(targets.appUrl ? { appUrl: targets.appUrl } : {}),
  });
  progress(
    `application database: ${migrated.applied} newer migrations applied${migrated.grant ? `, role ${migrated.grant.role} granted` : ''}`,
  );

  const temporalTakenAt = manifest.databases.find((part) => part.part === 'temporal')?.startedAt;
  const reconciled = temporalTakenAt
    ? await redriveAfter(targets.ownerUrl, temporalTakenAt)
    : { workflowStartsRedriven: 0, loansChangedAfterTemporal: [] };

  progress(`writing ${manifest.objectStore.objects} objects into ${targets.objectStore.bucket}…`);
  await mirrorIn(tools.mc.path, targets.objectStore, join(folder, OBJECTS_FOLDER));
  return { manifest, ...reconciled };
}

/** Every file the restore reads, against the manifest and the object list it vouches for. */
async function verifyChecksums(folder: string, manifest: Manifest): Promise<void> {
  const mismatches: string[] = [];
  for (const part of manifest.databases) {
    const actual = await sha256OfFile(join(folder, part.file)).catch(() => 'missing');
    if (actual !== part.sha256) mismatches.push(`${part.file}: ${actual}`);
  }
  const list = join(folder, OBJECTS_LIST);
  const listHash = await sha256OfFile(list).catch(() => 'missing');
  if (listHash !== manifest.objectStore.listSha256) mismatches.push(`${OBJECTS_LIST}: ${listHash}`);
  else {
    const expected = (await readFile(list, 'utf8')).split('\n').filter(Boolean);
    const actual = (await listFiles(join(folder, OBJECTS_FOLDER))).lines;
    const wanted = new Set(expected);
    const found = new Set(actual);
    for (const line of expected)
      if (!found.has(line)) mismatches.push(`object ${line.slice(66)}: missing or changed`);
    for (const line of actual)
      if (!wanted.has(line)) mismatches.push(`object ${line.slice(66)}: not in ${OBJECTS_LIST}`);
  }
  if (mismatches.length > 0)
    throw new Error(
      `the backup does not match its ${MANIFEST_FILE}; nothing was restored:\n${mismatches
        .slice(0, 20)
        .map((line) => `  - ${line}`)
        .join('\n')}`,
    );
}

/**
 * Temporal's snapshot is older than the application's by the time between the two dumps. A
 * workflow started in between is in the application's outbox as started but not in Temporal:
 * its row goes back to the sweeper, which starts it (an existing one counts as started). Loans
 * changed in between are listed: their workflows replay forward from an older point, and the
 * runbook says how to check them.
 */
/** The backup host's clock against the database's: a start re-driven twice is harmless. */
const CLOCK_MARGIN = '1 minute';

async function redriveAfter(
  ownerUrl: string,
  temporalTakenAt: string,
): Promise<Pick<RestoreOutcome, 'workflowStartsRedriven' | 'loansChangedAfterTemporal'>> {
  const sql = postgres(ownerUrl, { max: 1, onnotice: () => {} });
  try {
    const redriven = await sql`
      update workflow_outbox set started_at = null, next_attempt_at = now()
      where started_at >= ${temporalTakenAt}::timestamptz - ${CLOCK_MARGIN}::interval`;
    const loans = await sql<{ id: string }[]>`
      select id from loans
      where updated_at >= ${temporalTakenAt}::timestamptz - ${CLOCK_MARGIN}::interval order by id`;
    return {
      workflowStartsRedriven: redriven.count,
      loansChangedAfterTemporal: loans.map((loan) => loan.id),
    };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
