import { and, eq, type SQL } from 'drizzle-orm';
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
