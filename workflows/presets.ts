import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';

/**
 * How soon an attempt whose worker died is retried elsewhere: the worker heartbeats every running
 * activity that has this timeout (src/worker/heartbeats.ts), so a SIGKILLed worker's attempt is
 * given up after this long, not after its whole start-to-close timeout.
 */
const DEAD_WORKER_AFTER = '10 seconds';

/**
 * Named activity options. A database write in one transaction: short, idempotent (its keys come
 * from the workflow), retried with backoff for as long as the database is away.
 */
export const databaseWrite = {
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: DEAD_WORKER_AFTER,
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
} as const satisfies ActivityOptions;

/**
 * A short database statement run as a local activity, within the workflow task: no round trip
 * through the server's task queues (most of a webhook delivery's latency on an idle endpoint).
 */
export const localDatabaseWrite = {
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
} as const satisfies LocalActivityOptions;

/**
 * One HTTP attempt of a webhook delivery: the 15 s receiver budget plus the database around it,
 * and never retried by Temporal — the delivery's schedule decides what follows (a killed worker's
 * attempt, given up after its heartbeat timeout, is a failed attempt like any other).
 */
export const webhookAttempt = {
  startToCloseTimeout: '20 seconds',
  heartbeatTimeout: DEAD_WORKER_AFTER,
  retry: { maximumAttempts: 1 },
} as const satisfies ActivityOptions;

/**
 * A call to the lender's PSP (with the database writes around it): retried with backoff for as
 * long as the PSP is away — every call is safe to repeat (a payout by its idempotency key).
 */
export const pspCall = {
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: DEAD_WORKER_AFTER,
  retry: { initialInterval: '1 second', maximumInterval: '5 minutes' },
} as const satisfies ActivityOptions;
