import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import { deleteExpiredIdempotencyKeys } from '../db/queries/idempotency.js';
import type { Logger } from '../logger.js';
import { sweepOutbox } from '../temporal/outbox.js';

const PURGE_EVERY_MS = 10 * 60 * 1000;

/**
 * The worker's housekeeping, one task at a time: re-drive workflow starts that did not happen after
 * their commit (every `intervalMs`), and drop idempotency records past their 24 hours.
 */
export function startMaintenance(deps: {
  db: Db;
  temporal: Client;
  logger: Logger;
  intervalMs: number;
}) {
  let running: Promise<void> = Promise.resolve();
  let lastPurge = 0;
  const tick = async () => {
    try {
      const { started, failed } = await sweepOutbox(deps);
      if (started + failed > 0) deps.logger.info({ started, failed }, 'outbox swept');
      if (Date.now() - lastPurge >= PURGE_EVERY_MS) {
        lastPurge = Date.now();
        const purged = await deleteExpiredIdempotencyKeys(deps.db, new Date());
        if (purged > 0) deps.logger.info({ purged }, 'expired idempotency keys purged');
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
