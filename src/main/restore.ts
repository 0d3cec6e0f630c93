/**
 * `npm run restore -- <folder>`: a backup of `npm run backup` into empty databases and an empty
 * bucket (the same environment as the backup's, naming the new servers), after checking its
 * manifest and every checksum; then what docs/runbooks/restore.md says to check.
 */
import { restoreBackup } from '../backup/restore.js';
import { prepare, progressOf } from './backup-tools.js';

const { folder, targets, tools } = await prepare('restore');
try {
  const started = Date.now();
  const outcome = await restoreBackup(targets, tools, folder, progressOf('restore'));
  console.log(
    `restored ${folder} (taken ${outcome.manifest.startedAt}): ${outcome.manifest.databases.map((part) => part.part).join(', ')}, ${outcome.manifest.objectStore.objects} objects (${Date.now() - started} ms)`,
  );
  if (outcome.manifest.temporalNotIncluded)
    console.log(`note: ${outcome.manifest.temporalNotIncluded}`);
  else
    console.log(
      `workflow starts handed back to the sweeper: ${outcome.workflowStartsRedriven}; loans changed after Temporal's snapshot: ${outcome.loansChangedAfterTemporal.length}${outcome.loansChangedAfterTemporal.length ? ` (${outcome.loansChangedAfterTemporal.slice(0, 50).join(', ')})` : ''} — see docs/runbooks/restore.md`,
    );
  console.log(
    'before starting the service: the same TEMPORAL_PAYLOAD_KEYS, DATA_ENCRYPTION_KEYS and MinIO KMS key as when the backup was taken (they are not in it); then re-apply the erasures done since (docs/runbooks/restore.md)',
  );
} catch (error) {
  console.error(`restore failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
