import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { latestMigration } from '../db/migrate.js';
import { appliedMigration } from './migrations.js';
import { projectRoot } from '../project-root.js';
import type { PostgresClientTools } from '../devstack/postgres-client-tools.js';
import {
  MANIFEST_FILE,
  MANIFEST_FORMAT,
  OBJECTS_FOLDER,
  OBJECTS_LIST,
  type DatabasePart,
  type Manifest,
} from './manifest.js';
import { listFiles, mirrorOut, sha256OfFile } from './object-store.js';
import { databaseFacts, dumpDatabase, toolVersion } from './postgres.js';
import type { BackupTargets } from './targets.js';

export interface BackupTools {
  postgres: PostgresClientTools;
  mc: { path: string; source: string };
}

export const TEMPORAL_DEV_SERVER_NOTE =
  "Temporal's dev server (npm run dev) keeps its state in SQLite, not PostgreSQL: this backup holds the records and the documents, not the workflows";

/**
 * Takes a backup into `folder` (new, or empty), in the order that keeps the parts consistent
 * enough to restore (docs/operations/backups.md): Temporal's databases first, then the
 * application's, then the object store; the manifest last, so a folder without one is a backup
 * that did not finish.
 */
export async function takeBackup(
  targets: BackupTargets,
  tools: BackupTools,
  folder: string,
  progress: (line: string) => void,
): Promise<Manifest> {
  await mkdir(folder, { recursive: true });
  if ((await readdir(folder)).length > 0)
    throw new Error(`${folder} is not empty: a backup goes into a new folder`);

  const startedAt = new Date().toISOString();
  const databases: DatabasePart[] = [];
  const dump = async (part: DatabasePart['part'], url: string) => {
    const facts = await databaseFacts(url);
    const file = `${part}.dump`;
    const partStarted = new Date().toISOString();
    progress(`dumping ${part} (database ${facts.database})…`);
    await dumpDatabase(tools.postgres, url, join(folder, file));
    const path = join(folder, file);
    databases.push({
      part,
      file,
      database: facts.database,
      serverVersion: facts.serverVersion,
      startedAt: partStarted,
      finishedAt: new Date().toISOString(),
      bytes: (await stat(path)).size,
      sha256: await sha256OfFile(path),
    });
  };
  if (targets.temporal) {
    await dump('temporal', targets.temporal.persistenceUrl);
    await dump('temporal_visibility', targets.temporal.visibilityUrl);
  }
  await dump('application', targets.ownerUrl);

  progress(`mirroring the bucket ${targets.objectStore.bucket}…`);
  const objectsStarted = new Date().toISOString();
  const objectsFolder = join(folder, OBJECTS_FOLDER);
  await mkdir(objectsFolder);
  await mirrorOut(tools.mc.path, targets.objectStore, objectsFolder);
  const listing = await listFiles(objectsFolder);
  await writeFile(join(folder, OBJECTS_LIST), listing.lines.map((line) => `${line}\n`).join(''));

  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    startedAt,
    finishedAt: new Date().toISOString(),
    service: {
      version: await serviceVersion(),
      latestMigration: (await latestMigration()).tag,
      databaseMigration: await appliedMigration(targets.ownerUrl),
    },
    tools: {
      pgDump: await toolVersion(tools.postgres.pgDump),
      mc: `mc from ${tools.mc.source}`,
    },
    databases,
    ...(targets.temporal ? {} : { temporalNotIncluded: TEMPORAL_DEV_SERVER_NOTE }),
    objectStore: {
      bucket: targets.objectStore.bucket,
      startedAt: objectsStarted,
      finishedAt: new Date().toISOString(),
      objects: listing.files,
      bytes: listing.bytes,
      listSha256: await sha256OfFile(join(folder, OBJECTS_LIST)),
    },
  };
  await writeFile(join(folder, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

async function serviceVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(join(projectRoot, 'package.json'), 'utf8')) as {
    version?: string;
  };
  return pkg.version ?? 'unknown';
}
