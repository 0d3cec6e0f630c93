import type { Db } from '../src/db/client.js';
import type { Logger } from '../src/logger.js';
import { createCustomerActivities } from './customers.js';
import { createSmokeCheckActivities } from './smoke-check.js';

/** What activities may touch. Built once per worker process and handed in, never imported. */
export interface ActivityDeps {
  db: Db;
  logger: Logger;
  /** Names this worker process in records it writes (host and pid). */
  identity: string;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createSmokeCheckActivities(deps),
    ...createCustomerActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
