import { and, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { CustomerStatus } from '../../domain/customers/kyc.js';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { prepared } from '../prepared.js';
import { ofTenant, ofTenantParams, tenantParams } from '../tenancy.js';
import { paginate, type ListParams, type Page } from '../pagination.js';
import { customers } from '../schema/index.js';

export type Customer = typeof customers.$inferSelect;
export type NewCustomer = typeof customers.$inferInsert;

const customerById = prepared((db) =>
  db
    .select()
    .from(customers)
    .where(
      and(
        ofTenantParams(customers),
        eq(customers.id, sql.placeholder('id')),
        isNull(customers.erasedAt),
      ),
    )
    .limit(1)
    .prepare('customer_by_id'),
);

/**
 * The customer, unless erased (contract §15): an erased customer is no longer one to act on or
 * read; `GET /v3/customers/{id}` tells it apart ({@link findErasedCustomer}) to answer 410.
 */
export async function findCustomer(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
): Promise<Customer | undefined> {
  const [customer] = await customerById(db).execute({ ...tenantParams(tenant), id });
  return customer;
}

/** Ops only: the service's staff act on any partner's customer (not erased), named by id. */
export async function findCustomerForOps(db: DbOrTx, id: string): Promise<Customer | undefined> {
  return db.query.customers.findFirst({
    where: and(eq(customers.id, id), isNull(customers.erasedAt)),
  });
}

/** When the tenant's customer `id` was erased (undefined: not erased, or no such customer). */
export async function findErasedCustomer(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
): Promise<Date | undefined> {
  const [row] = await db
    .select({ erasedAt: customers.erasedAt })
    .from(customers)
    .where(and(ofTenant(customers, tenant), eq(customers.id, id)));
  return row?.erasedAt ?? undefined;
}

export async function findCustomerByIdentity(
  db: DbOrTx,
  tenant: Tenant,
  identity: { cpf: string; cnpj: string | null },
): Promise<Customer | undefined> {
  return db.query.customers.findFirst({
    where: and(
      ofTenant(customers, tenant),
      eq(customers.cpf, identity.cpf),
      sql`coalesce(${customers.cnpj}, '') = ${identity.cnpj ?? ''}`,
      isNull(customers.erasedAt),
    ),
  });
}

/** Inserts unless the (cpf, cnpj) identity exists already: `undefined` then, inside the same transaction. */
export async function insertCustomer(
  db: DbOrTx,
  values: NewCustomer,
): Promise<Customer | undefined> {
  const [row] = await db.insert(customers).values(values).onConflictDoNothing().returning();
  return row;
}

export async function updateCustomer(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  values: Partial<
    Pick<
      NewCustomer,
      | 'status'
      | 'kyc'
      | 'deniedReason'
      | 'creditAnalysis'
      | 'email'
      | 'phone'
      | 'name'
      | 'tradingName'
      | 'cnpj'
    >
  >,
): Promise<Customer | undefined> {
  const [row] = await db
    .update(customers)
    .set({ ...values, updatedAt: sql`now()` })
    .where(and(ofTenant(customers, tenant), eq(customers.id, id), isNull(customers.erasedAt)))
    .returning();
  return row;
}

export const customerSorts = {
  created_at: customers.createdAt,
  updated_at: customers.updatedAt,
  name: customers.name,
} as const;

export async function listCustomers(
  db: DbOrTx,
  tenant: Tenant,
  params: ListParams<keyof typeof customerSorts> & {
    external_id?: string | undefined;
    cpf?: string | undefined;
    status?: CustomerStatus | undefined;
  },
): Promise<Page<Customer>> {
  const filters: SQL[] = [isNull(customers.erasedAt)];
  if (params.external_id !== undefined) filters.push(eq(customers.externalId, params.external_id));
  if (params.cpf !== undefined) filters.push(eq(customers.cpf, params.cpf));
  if (params.status !== undefined) filters.push(eq(customers.status, params.status));
  return paginate<Customer>(db, {
    table: customers,
    idColumn: customers.id,
    sortColumn: customerSorts[params.sort],
    tenant,
    filters: and(...filters),
    params,
  });
}
