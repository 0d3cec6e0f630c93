/**
 * `npm run backup -- <folder>`: Temporal's databases (when Temporal runs on PostgreSQL), the
 * application's database and the object store's bucket into a new folder, with a manifest of
 * versions and checksums written last (docs/operations/backups.md). Reads the migrate command's
 * and the worker's environment (src/backup/targets.ts).
 */
import { takeBackup } from '../backup/backup.js';
import { prepare, progressOf } from './backup-tools.js';

const { folder, targets, tools } = await prepare('backup');
try {
  const started = Date.now();
  const manifest = await takeBackup(targets, tools, folder, progressOf('backup'));
  const dumps = manifest.databases.map((part) => `${part.part} ${part.bytes} bytes`).join(', ');
  console.log(
    `backup in ${folder}: ${dumps}; ${manifest.objectStore.objects} objects (${manifest.objectStore.bytes} bytes) (${Date.now() - started} ms)`,
  );
  if (manifest.temporalNotIncluded) console.log(`note: ${manifest.temporalNotIncluded}`);
} catch (error) {
  console.error(`backup failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
