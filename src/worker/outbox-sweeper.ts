import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import type { Logger } from '../logger.js';
import { sweepOutbox } from '../temporal/outbox.js';

/** Re-drives workflow starts that did not happen after their commit. Runs in every worker process. */
export function startOutboxSweeper(deps: {
  db: Db;
  temporal: Client;
  logger: Logger;
  intervalMs: number;
}) {
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(async () => {
      try {
        const { started, failed } = await sweepOutbox(deps);
        if (started + failed > 0) deps.logger.info({ started, failed }, 'outbox swept');
      } catch (error) {
        deps.logger.warn({ err: error }, 'outbox sweep failed; will retry');
      }
    });
  }, deps.intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
