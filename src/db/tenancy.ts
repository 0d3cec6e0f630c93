import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Tenant } from '../domain/tenant.js';

/** A table whose every row belongs to one partner in one environment. */
export interface TenantTable {
  partnerId: PgColumn;
  environment: PgColumn;
}

/** The one way a query is scoped to the caller: partner and environment, both, always. */
export function ofTenant(table: TenantTable, tenant: Tenant): SQL {
  return and(eq(table.partnerId, tenant.partnerId), eq(table.environment, tenant.environment))!;
}

/** `ofTenant` in a prepared query: partner and environment are parameters, given by `tenantParams`. */
export function ofTenantParams(table: TenantTable): SQL {
  return and(
    eq(table.partnerId, sql.placeholder('partnerId')),
    eq(table.environment, sql.placeholder('environment')),
  )!;
}

export const tenantParams = (tenant: Tenant) => ({
  partnerId: tenant.partnerId,
  environment: tenant.environment,
});
