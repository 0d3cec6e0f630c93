import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import type { KeyRing } from '../domain/key-ring.js';
import type { Logger } from '../logger.js';
import type { FileStore } from '../storage/file-store.js';

/** What customer commands need: the database, the workflow engine, the file store and a clock. */
export interface CustomerDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
  files: FileStore;
  taskQueue: string;
  sandboxReviewDelayMs: number;
  publicBaseUrl: string;
  clock: () => Date;
  /** DATA_ENCRYPTION_KEYS: an erased identity's keyed hash is derived from them. */
  dataKeys: KeyRing;
}
