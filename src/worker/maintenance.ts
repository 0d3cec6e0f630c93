import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import { deleteExpiredIdempotencyKeys } from '../db/queries/idempotency.js';
import { deleteFullRateLimitBuckets } from '../db/queries/rate-limits.js';
import { postUnpostedReceipts } from '../db/queries/receipts.js';
import type { Logger } from '../logger.js';
import type { PspClient } from '../psp/client.js';
import { removeClosedCharges } from '../psp/charges.js';
import type { FileStore } from '../storage/file-store.js';
import { sweepOrphanedFiles } from '../storage/orphan-sweeper.js';
import { sweepOutbox } from '../temporal/outbox.js';
import { queueMissingReminders } from '../temporal/reminder-workflows.js';
import type { WorkerMetrics } from './metrics.js';

const PURGE_EVERY_MS = 10 * 60 * 1000;
const ORPHAN_SWEEP_EVERY_MS = 60 * 60 * 1000;
const BUCKET_GRACE_MS = 10 * 60 * 1000;

/**
 * The worker's housekeeping, one task at a time: re-drive workflow starts that did not happen after
 * their commit (every `intervalMs`), drop idempotency records past their 24 hours and rate-limit
 * buckets full for 10 minutes, post unmatched Pix an older API stored unposted, queue the reminders
 * workflow of loans an older worker made active without it, and remove stored files no row names after a day (hourly; counted
 * in `file_store_orphans_removed_total`). With a PSP, every round also removes there the closed
 * production charges their activities could not (contract §16: the PSP was down, the worker died
 * after the commit), so a cancelled or expired charge cannot be paid.
 */
export function startMaintenance(deps: {
  db: Db;
  temporal: Client;
  logger: Logger;
  /** The file store whose orphans to sweep (none: no sweep, as in benchmarks). */
  files: FileStore | undefined;
  /** The lender's PSP (null: none configured, nothing to remove there). */
  psp?: PspClient | null;
  metrics: WorkerMetrics;
  intervalMs: number;
  /** The service's task queue (starts the housekeeping queues). */
  taskQueue: string;
}) {
  let running: Promise<void> = Promise.resolve();
  let lastPurge = 0;
  let lastOrphanSweep = 0;
  const tick = async () => {
    try {
      const { started, failed } = await sweepOutbox(deps);
      if (started + failed > 0) deps.logger.info({ started, failed }, 'outbox swept');
      if (deps.psp) {
        const { removed } = await removeClosedCharges({
          db: deps.db,
          psp: deps.psp,
          logger: deps.logger,
        });
        if (removed > 0) deps.logger.info({ removed }, 'closed charges removed at the PSP');
      }
      if (Date.now() - lastPurge >= PURGE_EVERY_MS) {
        lastPurge = Date.now();
        const purged = await deleteExpiredIdempotencyKeys(deps.db, new Date());
        if (purged > 0) deps.logger.info({ purged }, 'expired idempotency keys purged');
        // Rate-limit buckets full for 10 minutes read as no bucket at all.
        const buckets = await deleteFullRateLimitBuckets(deps.db, BUCKET_GRACE_MS);
        if (buckets > 0) deps.logger.info({ buckets }, 'full rate-limit buckets purged');
        // Unmatched Pix an API of the previous release stored without posting (a rolling deploy).
        const receipts = await postUnpostedReceipts(deps.db);
        if (receipts > 0) deps.logger.warn({ receipts }, 'unmatched Pix posted late to the ledger');
        // Loans the previous release made active, without their reminders workflow.
        const reminders = await queueMissingReminders(deps.db, deps.taskQueue);
        if (reminders > 0) deps.logger.warn({ reminders }, 'missing reminders workflows queued');
      }
      if (deps.files && Date.now() - lastOrphanSweep >= ORPHAN_SWEEP_EVERY_MS) {
        lastOrphanSweep = Date.now();
        const { examined, removed } = await sweepOrphanedFiles(
          { db: deps.db, files: deps.files },
          new Date(),
        );
        deps.metrics.orphansRemoved.inc(removed);
        deps.logger.info({ examined, removed }, 'orphaned files swept');
      }
    } catch (error) {
      deps.logger.warn({ err: error }, 'maintenance failed; will retry');
    }
  };
  const timer = setInterval(() => {
    running = running.then(tick);
  }, deps.intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
