import { loadConfig } from '../config.js';
import { createDatabase } from '../db/client.js';
import { runMigrations } from '../db/migrate.js';
import { connectTemporalClient } from '../temporal/client.js';
import { createWorker, NativeConnection, Runtime } from '../worker/create-worker.js';
import { startMaintenance } from '../worker/maintenance.js';
import { runMain } from './run-main.js';

await runMain('worker', async (logger) => {
  const config = loadConfig();
  logger.level = config.logLevel;
  // runMain owns the signals, so the shutdown order (sweeper, worker, connections) stays ours.
  Runtime.install({ shutdownSignals: [] });
  await runMigrations(config.databaseUrl);
  const database = createDatabase(config.databaseUrl, { max: config.databasePoolSize });
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const temporal = await connectTemporalClient(config.temporal);
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    db: database.db,
    logger,
  });
  const sweeper = startMaintenance({
    db: database.db,
    temporal,
    logger,
    intervalMs: config.outboxSweepIntervalMs,
  });
  const running = worker.run();
  logger.info(
    { taskQueue: config.temporal.taskQueue, namespace: config.temporal.namespace },
    'worker running',
  );
  return async () => {
    await sweeper.stop();
    worker.shutdown();
    await running;
    await connection.close();
    await temporal.connection.close();
    await database.close();
  };
});
