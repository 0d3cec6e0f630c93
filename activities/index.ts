import type { Client } from '@temporalio/client';
import type { Db } from '../src/db/client.js';
import type { Logger } from '../src/logger.js';
import { createCustomerActivities } from './customers.js';
import { createSmokeCheckActivities } from './smoke-check.js';
import { createWebhookActivities } from './webhooks.js';
import type { SealedBox } from '../src/domain/sealed-box.js';

/** What activities may touch. Built once per worker process and handed in, never imported. */
export interface ActivityDeps {
  db: Db;
  logger: Logger;
  /** Names this worker process in records it writes (host and pid). */
  identity: string;
  /** Starts the workflows a write implies (webhook deliveries) right after its commit. */
  temporal: Client;
  taskQueue: string;
  webhooks: {
    /** Opens the endpoints' sealed secrets. */
    sealedBox: SealedBox;
    allowPrivateTargets: boolean;
    /** Extra CA certificates (PEM) trusted for deliveries. */
    ca?: string;
  };
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createSmokeCheckActivities(deps),
    ...createCustomerActivities(deps),
    ...createWebhookActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
