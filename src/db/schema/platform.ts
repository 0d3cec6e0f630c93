import { sql } from 'drizzle-orm';
import { bigserial, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Workflow starts that must happen because a row was committed. The row and its outbox entry are
 * written in one transaction; the start is attempted right after the commit and re-driven by the
 * worker's sweeper until Temporal has it, so a crash between the two loses nothing.
 */
export const workflowOutbox = pgTable(
  'workflow_outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    workflowId: text('workflow_id').notNull(),
    workflowType: text('workflow_type').notNull(),
    taskQueue: text('task_queue').notNull(),
    args: jsonb('args').$type<unknown[]>().notNull(),
    searchAttributes: jsonb('search_attributes').$type<Record<string, string>>().notNull(),
    /** One line for the Temporal UI; ids only, never personal data. */
    summary: text('summary'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    startedAt: timestamp('started_at', { withTimezone: true, precision: 3 }),
    /**
     * With tracing on: the W3C trace context (`traceparent`, `tracestate`) of whoever enqueued the
     * start, so a start the sweeper makes later still continues that trace.
     */
    traceContext: jsonb('trace_context').$type<Record<string, string>>(),
  },
  (t) => [
    index('workflow_outbox_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.startedAt} is null`),
  ],
);

/**
 * An ops smoke check: one request that crosses every moving part (API → PostgreSQL → Temporal →
 * worker → activity → PostgreSQL). Run one after a deploy to prove the stack is wired.
 */
export const smokeChecks = pgTable('smoke_checks', {
  id: text('id').primaryKey(),
  status: text('status', { enum: ['pending', 'completed'] }).notNull(),
  delayMs: integer('delay_ms').notNull(),
  workflowId: text('workflow_id').notNull(),
  completedBy: text('completed_by'),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  completedAt: timestamp('completed_at', { withTimezone: true, precision: 3 }),
});
