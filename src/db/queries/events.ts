import type { Actor } from '../../domain/operators.js';
import { and, eq, or, sql, type SQL } from 'drizzle-orm';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { ofTenant } from '../tenancy.js';
import { paginate, type ListParams, type Page } from '../pagination.js';
import { events } from '../schema/index.js';

export type Event = typeof events.$inferSelect;

/**
 * Records events inside the caller's transaction. Ids are chosen by the caller (a workflow derives
 * them deterministically), so a retried write records each event exactly once.
 */
export async function recordEvents(
  db: DbOrTx,
  tenant: Tenant,
  batch: {
    id: string;
    type: string;
    data: Record<string, unknown>;
    createdAt: Date;
    actor?: Actor | undefined;
  }[],
): Promise<void> {
  if (batch.length === 0) return;
  await db
    .insert(events)
    .values(
      batch.map((event) => ({
        ...event,
        actor: event.actor ?? null,
        partnerId: tenant.partnerId,
        environment: tenant.environment,
      })),
    )
    .onConflictDoNothing();
}

export async function findEvent(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
): Promise<Event | undefined> {
  return db.query.events.findFirst({ where: and(ofTenant(events, tenant), eq(events.id, id)) });
}

// `created_at` order is insertion order: events written together share a timestamp.
export const eventSorts = { created_at: events.seq } as const;

/** The payload fields that name a record an event is about (its own `id`, and its owners'). */
export const resourceFields = [
  'id',
  'customer_id',
  'credit_offer_id',
  'loan_id',
  'charge_id',
  'simulation_id',
] as const;

export async function listEvents(
  db: DbOrTx,
  tenant: Tenant,
  params: ListParams<keyof typeof eventSorts> & {
    type?: string | undefined;
    resource_id?: string | undefined;
  },
): Promise<Page<Event>> {
  const filters: SQL[] = [];
  if (params.type !== undefined) filters.push(eq(events.type, params.type));
  if (params.resource_id !== undefined) {
    // One containment per field, so the GIN index (`events_data_idx`) answers each.
    const id = params.resource_id;
    filters.push(
      or(
        ...resourceFields.map(
          (field) => sql`${events.data} @> ${JSON.stringify({ [field]: id })}::jsonb`,
        ),
      )!,
    );
  }
  return paginate<Event>(db, {
    table: events,
    idColumn: events.id,
    sortColumn: eventSorts[params.sort],
    tenant,
    filters: filters.length > 0 ? and(...filters) : undefined,
    params,
  });
}
