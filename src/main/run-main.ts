import { ConfigError } from '../config.js';
import { createLogger, type Logger } from '../logger.js';

/**
 * Runs a process entry point: starts it, then on SIGINT/SIGTERM runs its stop function once and
 * exits. A configuration error prints the full list of problems and exits 78 (EX_CONFIG).
 */
export async function runMain(
  name: string,
  start: (logger: Logger) => Promise<() => Promise<void>>,
): Promise<void> {
  const logger = createLogger(process.env.LOG_LEVEL ?? 'info', `embedded-credit-${name}`);
  let stop: () => Promise<void>;
  try {
    stop = await start(logger);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(78);
    }
    logger.fatal({ err: error }, `${name} failed to start`);
    process.exit(1);
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `${name} stopping`);
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, `${name} did not stop cleanly`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  // Started by `npm run dev`: stop when the supervisor goes away, however it went.
  if (process.send) process.once('disconnect', () => shutdown('supervisor gone'));
}
