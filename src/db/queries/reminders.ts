import { and, eq, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { collectionSchedules, reminderOptOuts, remindersSent } from '../schema/index.js';
import { ofTenant } from '../tenancy.js';
import type { Tenant } from '../../domain/tenant.js';
import type { ReminderStep } from '../../domain/reminders/schedule.js';

export type CollectionSchedule = typeof collectionSchedules.$inferSelect;
export type ReminderSent = typeof remindersSent.$inferSelect;
export type NewReminderSent = typeof remindersSent.$inferInsert;

/** The partner's schedule in this environment; undefined: never set (no reminders). */
export async function findCollectionSchedule(
  db: DbOrTx,
  tenant: Tenant,
): Promise<CollectionSchedule | undefined> {
  const [row] = await db
    .select()
    .from(collectionSchedules)
    .where(ofTenant(collectionSchedules, tenant));
  return row;
}

/** Replaces the partner's schedule whole. */
export async function saveCollectionSchedule(
  db: DbOrTx,
  tenant: Tenant,
  steps: ReminderStep[],
): Promise<CollectionSchedule> {
  const [row] = await db
    .insert(collectionSchedules)
    .values({ ...tenant, steps })
    .onConflictDoUpdate({
      target: [collectionSchedules.partnerId, collectionSchedules.environment],
      set: { steps, updatedAt: sql`now()` },
    })
    .returning();
  if (!row) throw new Error('collection schedule upsert returned no row');
  return row;
}

/** Records reminders not recorded before; answers those this call wrote. */
export async function insertRemindersSent(
  tx: DbOrTx,
  rows: NewReminderSent[],
): Promise<ReminderSent[]> {
  if (rows.length === 0) return [];
  return tx.insert(remindersSent).values(rows).onConflictDoNothing().returning();
}

/** The loan's e-mail reminders recorded and not yet handed to the SMTP server. */
export function unsentReminderEmails(
  db: DbOrTx,
  tenant: Tenant,
  loanId: string,
): Promise<ReminderSent[]> {
  return db
    .select()
    .from(remindersSent)
    .where(
      and(
        ofTenant(remindersSent, tenant),
        eq(remindersSent.loanId, loanId),
        eq(remindersSent.channel, 'email'),
        isNull(remindersSent.emailedAt),
      ),
    );
}

export async function markReminderEmailed(db: DbOrTx, id: string): Promise<void> {
  await db
    .update(remindersSent)
    .set({ emailedAt: sql`now()` })
    .where(eq(remindersSent.id, id));
}

export async function hasOptedOut(
  db: DbOrTx,
  tenant: Tenant,
  customerId: string,
): Promise<boolean> {
  const [row] = await db
    .select({ customerId: reminderOptOuts.customerId })
    .from(reminderOptOuts)
    .where(and(ofTenant(reminderOptOuts, tenant), eq(reminderOptOuts.customerId, customerId)));
  return row !== undefined;
}

/** Records the opt-out (once; a second confirmation changes nothing). */
export async function recordOptOut(db: DbOrTx, tenant: Tenant, customerId: string): Promise<void> {
  await db
    .insert(reminderOptOuts)
    .values({ ...tenant, customerId })
    .onConflictDoNothing();
}
