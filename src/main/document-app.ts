import { Client, Connection } from '@temporalio/client';
import { createApp, type App } from '../app.js';
import { loadConfig } from '../config.js';
import { createDatabase } from '../db/client.js';
import { createHttpMetrics } from '../http/metrics.js';
import { createLogger } from '../logger.js';

/**
 * The app as the documents describe it (production's webhook rules, an https base URL), built with
 * connections that are never dialled: only its routes are read. `close` ends it.
 */
export function documentApp(): App & { dispose: () => Promise<void> } {
  const config = loadConfig({
    NODE_ENV: 'development',
    DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
    PUBLIC_BASE_URL: 'https://api.example.com',
    S3_BUCKET: 'unused', // the document is built from the routes; no file is stored
  });
  const database = createDatabase(config.databaseUrl, { max: 1 });
  const app = createApp({
    config,
    database,
    temporal: new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }),
    logger: createLogger('silent'),
    metrics: createHttpMetrics({ processMetrics: false }),
  });
  return {
    ...app,
    dispose: async () => {
      await app.close();
      await database.close();
    },
  };
}
