import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import type { Logger } from '../logger.js';
import { serializeError } from '../logger.js';

const levels = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
} as const satisfies Record<LogLevel, string>;

/**
 * The Temporal SDK's logs — the worker's, its Core's (forwarded), workflows' and activities' `log`
 * — as lines of the service's own pino logger (issue 42: one log format), so a log shipper reads
 * one JSON object per line from every process. The SDK's metadata (`sdkComponent`, `taskQueue`,
 * `workflowId`, `activityType`, …) become fields of the line; an `error` or `failure` is written as
 * the service writes errors (name, message, code, stack, cause chain) under `err`.
 */
export function temporalLogger(logger: Logger): TemporalLogger {
  const sdk = logger.child({ component: 'temporal-sdk' });
  const log = (level: LogLevel, message: string, meta: LogMetadata = {}) => {
    const { error, failure, ...fields } = meta as Record<string, unknown>;
    const thrown = error ?? failure;
    sdk[levels[level] ?? 'info'](
      thrown === undefined ? fields : { ...fields, err: serializeError(thrown) },
      message,
    );
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
