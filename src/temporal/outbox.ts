import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  type Client,
} from '@temporalio/client';
import {
  TypedSearchAttributes,
  WorkflowIdReusePolicy,
  type UpdateDefinition,
} from '@temporalio/common';
import { and, eq, inArray, isNull, lte, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../db/client.js';
import { workflowOutbox } from '../db/schema/index.js';
import type { Logger } from '../logger.js';
import { currentTraceContext, withTraceContext } from '../observability/tracing.js';
import { searchAttributes, type SearchAttributeName } from './search-attributes.js';

export interface WorkflowStart {
  workflowId: string;
  workflowType: string;
  taskQueue: string;
  args: unknown[];
  searchAttributes?: Partial<Record<SearchAttributeName, string>>;
  /** One line shown for the workflow in the Temporal UI; ids only, never personal data. */
  summary?: string;
}

type OutboxRow = typeof workflowOutbox.$inferSelect;

/** How long the request that wrote a row has to start its workflow before the sweeper steps in. */
const SWEEP_GRACE_SECONDS = 10;
/** How long a sweeper holds a claimed row before another may try it. */
const CLAIM_LEASE_SECONDS = 30;
const MAX_RETRY_SECONDS = 300;

/** Records, inside the caller's transaction, a workflow start that must follow the commit. */
export async function enqueueWorkflowStart(tx: DbOrTx, start: WorkflowStart): Promise<OutboxRow> {
  const [row] = await enqueueWorkflowStarts(tx, [start]);
  if (!row) throw new Error('outbox insert returned no row');
  return row;
}

/** Records several starts in one statement (a fan-out, a recovery). */
export async function enqueueWorkflowStarts(
  tx: DbOrTx,
  starts: WorkflowStart[],
): Promise<OutboxRow[]> {
  if (starts.length === 0) return [];
  return tx
    .insert(workflowOutbox)
    .values(
      starts.map((start) => ({
        workflowId: start.workflowId,
        workflowType: start.workflowType,
        taskQueue: start.taskQueue,
        args: start.args,
        searchAttributes: start.searchAttributes ?? {},
        summary: start.summary ?? null,
        traceContext: currentTraceContext(),
        nextAttemptAt: sql`now() + make_interval(secs => ${SWEEP_GRACE_SECONDS})`,
      })),
    )
    .returning();
}

/**
 * Starts the workflow of one outbox row and marks it started. A workflow that already exists
 * counts as started: the id names the record, so this is the same workflow. Failures are recorded
 * on the row for the sweeper and never thrown: the record is committed, the start will follow.
 */
export async function dispatchWorkflowStart(
  deps: { db: Db; temporal: Client; logger: Logger },
  row: OutboxRow,
): Promise<boolean> {
  try {
    // Bounded by the call's deadline (src/temporal/client.ts): a request must not hang on an
    // unreachable Temporal while the client retries. With tracing on, in the trace of whoever
    // enqueued it (the request, the activity), also when the sweeper starts it later.
    await withTraceContext(row.traceContext, () =>
      deps.temporal.workflow.start(row.workflowType, {
        workflowId: row.workflowId,
        taskQueue: row.taskQueue,
        args: row.args,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        typedSearchAttributes: toTypedSearchAttributes(row.searchAttributes),
        ...(row.summary ? { staticSummary: row.summary } : {}),
      }),
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) {
      const message = error instanceof Error ? error.message : String(error);
      deps.logger.warn(
        { workflowId: row.workflowId, err: message },
        'workflow start deferred to the sweeper',
      );
      // Due again after a backoff that doubles per attempt: 1 s, 2 s, 4 s … capped at 5 minutes.
      const retryInSeconds = Math.min(2 ** row.attempts, MAX_RETRY_SECONDS);
      await deps.db
        .update(workflowOutbox)
        .set({
          lastError: message.slice(0, 1000),
          nextAttemptAt: sql`now() + make_interval(secs => ${retryInSeconds})`,
        })
        .where(eq(workflowOutbox.id, row.id))
        .catch(() => {});
      return false;
    }
  }
  await deps.db
    .update(workflowOutbox)
    .set({ startedAt: sql`now()` })
    .where(eq(workflowOutbox.id, row.id));
  return true;
}

/** Claims due rows (skipping those another sweeper holds) and starts their workflows. */
export async function sweepOutbox(
  deps: { db: Db; temporal: Client; logger: Logger },
  batchSize = 100,
): Promise<{ started: number; failed: number }> {
  const due = deps.db
    .select({ id: workflowOutbox.id })
    .from(workflowOutbox)
    .where(and(isNull(workflowOutbox.startedAt), lte(workflowOutbox.nextAttemptAt, sql`now()`)))
    .orderBy(workflowOutbox.nextAttemptAt)
    .limit(batchSize)
    .for('update', { skipLocked: true });
  const claimed = await deps.db
    .update(workflowOutbox)
    .set({
      nextAttemptAt: sql`now() + make_interval(secs => ${CLAIM_LEASE_SECONDS})`,
      attempts: sql`${workflowOutbox.attempts} + 1`,
    })
    .where(inArray(workflowOutbox.id, due))
    .returning();
  let started = 0;
  let failed = 0;
  for (const row of claimed) {
    if (await dispatchWorkflowStart(deps, row)) started++;
    else failed++;
  }
  return { started, failed };
}

export function toTypedSearchAttributes(values: Record<string, string>): TypedSearchAttributes {
  const pairs = Object.entries(values).flatMap(([name, value]) => {
    const key = searchAttributes[name as SearchAttributeName];
    return key ? [{ key, value }] : [];
  });
  return new TypedSearchAttributes(pairs);
}

/**
 * Sends an Update to the workflow `start` describes, starting it if its outbox start has not
 * happened yet (update-with-start), so a command never waits on the sweeper. Bounded by the calls'
 * deadlines (src/temporal/client.ts): past them the caller gets
 * `WorkflowUpdateRPCTimeoutOrCancelledError`. `updateId` names the command, so a
 * retry after an unclear answer finds the one it sent (Temporal keeps an Update's outcome by id).
 */
export async function updateWithStart<Ret, Args extends unknown[]>(
  temporal: Client,
  start: WorkflowStart,
  update: UpdateDefinition<Ret, Args>,
  args: Args,
  updateId?: string,
): Promise<Ret> {
  const startOperation = new WithStartWorkflowOperation(start.workflowType, {
    workflowId: start.workflowId,
    taskQueue: start.taskQueue,
    args: start.args,
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    typedSearchAttributes: toTypedSearchAttributes(start.searchAttributes ?? {}),
    ...(start.summary ? { staticSummary: start.summary } : {}),
  });
  return temporal.workflow.executeUpdateWithStart(update, {
    args,
    startWorkflowOperation: startOperation,
    ...(updateId ? { updateId } : {}),
  });
}

/**
 * Seconds the oldest outbox row still unstarted has waited since its commit (0 when none): the
 * `workflow_outbox_oldest_pending_seconds` gauge ops alert on. Reads the pending rows only (the
 * partial index of the sweeper).
 */
export async function oldestPendingStartSeconds(db: DbOrTx): Promise<number> {
  const [row] = await db
    .select({
      seconds: sql<string>`coalesce(extract(epoch from now() - min(${workflowOutbox.createdAt})), 0)`,
    })
    .from(workflowOutbox)
    .where(isNull(workflowOutbox.startedAt));
  return Math.max(0, Number(row?.seconds ?? 0));
}
