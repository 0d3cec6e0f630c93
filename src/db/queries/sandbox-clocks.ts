import { eq, inArray } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { sandboxClocks } from '../schema/index.js';

export type SandboxClock = typeof sandboxClocks.$inferSelect;

/**
 * How far the customer's clock runs ahead of real time (0 when it never moved). A transaction that
 * starts a workflow waiting on the customer's behalf reads it after locking the customer row, so
 * it sees any advance committed before (see `sandboxClocks`).
 */
export async function clockOffset(db: DbOrTx, customerId: string): Promise<number> {
  const [row] = await db
    .select({ offsetMs: sandboxClocks.offsetMs })
    .from(sandboxClocks)
    .where(eq(sandboxClocks.customerId, customerId));
  return row?.offsetMs ?? 0;
}

/** The offsets of several customers' clocks (absent: 0). */
export async function clockOffsets(
  db: DbOrTx,
  customerIds: string[],
): Promise<Map<string, number>> {
  if (customerIds.length === 0) return new Map();
  const rows = await db
    .select({ customerId: sandboxClocks.customerId, offsetMs: sandboxClocks.offsetMs })
    .from(sandboxClocks)
    .where(inArray(sandboxClocks.customerId, [...new Set(customerIds)]));
  return new Map(rows.map((row) => [row.customerId, row.offsetMs]));
}

export async function findSandboxClock(
  db: DbOrTx,
  customerId: string,
): Promise<SandboxClock | undefined> {
  const [row] = await db
    .select()
    .from(sandboxClocks)
    .where(eq(sandboxClocks.customerId, customerId));
  return row;
}
