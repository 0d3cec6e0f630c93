import { bigint, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampColumn as ts } from './columns.js';
import { customers } from './customers.js';

export const clockStatuses = ['advancing', 'ready'] as const;
export type ClockStatus = (typeof clockStatuses)[number];

/**
 * A sandbox customer's clock (contract §12): real time plus `offset_ms`, which only grows. No row
 * means the clock has never moved. `POST /v3/sandbox/customers/{id}/clock` writes the new offset,
 * a new `generation` and `advancing`; that generation's workflow writes `ready` once everything
 * that fell due has happened. An advance locks the customer row, and every transaction that
 * starts a workflow waiting on the customer's behalf locks it too (and reads the offset after),
 * so an advance either sees the new workflow or the workflow starts with the new offset.
 */
export const sandboxClocks = pgTable('sandbox_clocks', {
  customerId: text('customer_id')
    .primaryKey()
    .references(() => customers.id),
  offsetMs: bigint('offset_ms', { mode: 'number' }).notNull(),
  generation: integer('generation').notNull(),
  status: text('status', { enum: clockStatuses }).notNull(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});
