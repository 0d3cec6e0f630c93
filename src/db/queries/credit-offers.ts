import { and, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { CreditOfferStatus } from '../../domain/credit/offers.js';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { prepared } from '../prepared.js';
import { ofTenant, ofTenantParams, tenantParams } from '../tenancy.js';
import { paginate, type ListParams, type Page } from '../pagination.js';
import { creditOffers, customers, sandboxClocks, simulations } from '../schema/index.js';

export type CreditOffer = typeof creditOffers.$inferSelect;
export type NewCreditOffer = typeof creditOffers.$inferInsert;
export type Simulation = typeof simulations.$inferSelect;
export type NewSimulation = typeof simulations.$inferInsert;

export async function findCreditOffer(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
): Promise<CreditOffer | undefined> {
  return db.query.creditOffers.findFirst({
    where: and(ofTenant(creditOffers, tenant), eq(creditOffers.id, id)),
  });
}

const offerForPricing = prepared((db) =>
  db
    .select({ offer: creditOffers, cnpj: customers.cnpj, clockOffsetMs: sandboxClocks.offsetMs })
    .from(creditOffers)
    .innerJoin(customers, eq(customers.id, creditOffers.customerId))
    .leftJoin(sandboxClocks, eq(sandboxClocks.customerId, creditOffers.customerId))
    .where(and(ofTenantParams(creditOffers), eq(creditOffers.id, sql.placeholder('id'))))
    .limit(1)
    .prepare('credit_offer_for_pricing'),
);

/**
 * The offer with what pricing needs of its customer — whether it has a cnpj, and how far its
 * sandbox clock was moved (0 if never) — in one read prepared once: a simulation's reads are one
 * round trip.
 */
export async function findCreditOfferForPricing(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
): Promise<(CreditOffer & { customerHasCnpj: boolean; clockOffsetMs: number }) | undefined> {
  const [row] = await offerForPricing(db).execute({ ...tenantParams(tenant), id });
  if (!row) return undefined;
  return {
    ...row.offer,
    customerHasCnpj: row.cnpj !== null,
    // Only a sandbox customer has a clock (contract §12); production reads real time.
    clockOffsetMs: tenant.environment === 'sandbox' ? (row.clockOffsetMs ?? 0) : 0,
  };
}

/** Inserts the offer unless its id exists (a retried activity), and answers the stored row. */
export async function insertCreditOffer(db: DbOrTx, values: NewCreditOffer): Promise<CreditOffer> {
  const [row] = await db.insert(creditOffers).values(values).onConflictDoNothing().returning();
  if (row) return row;
  const existing = await db.query.creditOffers.findFirst({ where: eq(creditOffers.id, values.id) });
  if (!existing) throw new Error(`credit offer ${values.id} neither inserted nor found`);
  return existing;
}

/** Updates the offer; with `from`, only if it is still in that status with that loan. */
export async function updateCreditOffer(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  values: Partial<Pick<NewCreditOffer, 'status' | 'loanId' | 'spentAt'>>,
  from?: { status: CreditOfferStatus; loanId: string | null },
): Promise<CreditOffer | undefined> {
  const [row] = await db
    .update(creditOffers)
    .set({ ...values, updatedAt: sql`now()` })
    .where(
      and(
        ofTenant(creditOffers, tenant),
        eq(creditOffers.id, id),
        from && eq(creditOffers.status, from.status),
        from &&
          (from.loanId === null
            ? isNull(creditOffers.loanId)
            : eq(creditOffers.loanId, from.loanId)),
      ),
    )
    .returning();
  return row;
}

export const creditOfferSorts = {
  created_at: creditOffers.createdAt,
  valid_until: creditOffers.validUntil,
} as const;

export async function listCreditOffers(
  db: DbOrTx,
  tenant: Tenant,
  params: ListParams<keyof typeof creditOfferSorts> & {
    customer_id?: string | undefined;
    status?: CreditOfferStatus | undefined;
  },
): Promise<Page<CreditOffer>> {
  const filters: SQL[] = [];
  if (params.customer_id !== undefined)
    filters.push(eq(creditOffers.customerId, params.customer_id));
  if (params.status !== undefined) filters.push(eq(creditOffers.status, params.status));
  return paginate<CreditOffer>(db, {
    table: creditOffers,
    idColumn: creditOffers.id,
    sortColumn: creditOfferSorts[params.sort],
    tenant,
    filters: and(...filters),
    params,
  });
}

const simulationInsert = prepared((db) =>
  db
    .insert(simulations)
    .values({
      id: sql.placeholder('id'),
      partnerId: sql.placeholder('partnerId'),
      environment: sql.placeholder('environment'),
      creditOfferId: sql.placeholder('creditOfferId'),
      customerId: sql.placeholder('customerId'),
      figures: sql.placeholder('figures'),
      validUntil: sql.placeholder('validUntil'),
    })
    .returning({ createdAt: simulations.createdAt })
    .prepare('insert_simulation'),
);

/**
 * Stores a simulation as computed, by an insert prepared once; only its creation time comes back
 * (the figures are the caller's already).
 */
export async function insertSimulation(
  db: DbOrTx,
  values: Omit<NewSimulation, 'createdAt'>,
): Promise<Simulation> {
  const [row] = await simulationInsert(db).execute(values);
  if (!row) throw new Error('simulation insert returned no row');
  return { ...values, createdAt: row.createdAt };
}

export async function findSimulation(
  db: DbOrTx,
  tenant: Tenant,
  ids: { creditOfferId: string; simulationId: string },
): Promise<Simulation | undefined> {
  return db.query.simulations.findFirst({
    where: and(
      eq(simulations.partnerId, tenant.partnerId),
      eq(simulations.environment, tenant.environment),
      eq(simulations.creditOfferId, ids.creditOfferId),
      eq(simulations.id, ids.simulationId),
    ),
  });
}
