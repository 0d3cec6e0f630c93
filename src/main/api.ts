import type { Server } from 'node:http';
import { createApp } from '../app.js';
import { loadConfig } from '../config.js';
import { createDatabase } from '../db/client.js';
import { checkDatabaseAtStart } from '../db/start-check.js';
import { createHttpMetrics } from '../http/metrics.js';
import { connectTemporalClient } from '../temporal/client.js';
import { customerKeysIn } from '../temporal/customer-keys.js';
import { startTracing } from '../observability/tracing.js';
import { runMain } from './run-main.js';

await runMain('api', async (logger) => {
  const config = loadConfig();
  logger.level = config.logLevel;
  // Before any client or app is made: they add their tracing parts only when it is on.
  const tracing = await startTracing(config.tracing, 'embedded-credit-api');
  // Migrations are the migrate command's (as the owner); this role reads and writes rows only.
  const database = createDatabase(config.databaseUrl, { max: config.databasePoolSize });
  await checkDatabaseAtStart(database.sql, config.nodeEnv, logger);
  const temporal = await connectTemporalClient({
    ...config.temporal,
    customerKeys: customerKeysIn(database.db, config.temporal.payloadKeys),
  });
  const { koa: app, close: closeApp } = createApp({
    config,
    database,
    temporal,
    logger,
    metrics: createHttpMetrics({ processMetrics: true }),
  });
  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve) => server.once('listening', resolve));
  // The same app on the ops listener: it answers only the ops API there (separateOpsListener).
  const opsServer =
    config.opsPort === undefined ? undefined : app.listen(config.opsPort, config.host);
  if (opsServer) await new Promise<void>((resolve) => opsServer.once('listening', resolve));
  logger.info(
    {
      host: config.host,
      port: config.port,
      opsPort: config.opsPort,
      publicBaseUrl: config.publicBaseUrl,
    },
    'api listening',
  );
  return async () => {
    const closed = (listener: Server) =>
      new Promise<void>((resolve) => listener.close(() => resolve()));
    await Promise.all([closed(server), ...(opsServer ? [closed(opsServer)] : [])]);
    server.closeAllConnections();
    opsServer?.closeAllConnections();
    await closeApp();
    await temporal.connection.close();
    await database.close();
    await tracing?.shutdown();
  };
});
