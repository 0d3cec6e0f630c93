import { and, asc, desc, eq, gt, lt, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { problems } from '../errors.js';
import type { Tenant } from '../domain/tenant.js';
import type { DbOrTx } from './client.js';
import { ofTenant, type TenantTable } from './tenancy.js';

export interface ListParams<S extends string = string> {
  limit: number;
  starting_after?: string | undefined;
  sort: S;
  order: 'asc' | 'desc';
}

export interface Page<T> {
  rows: T[];
  hasMore: boolean;
}

/**
 * Forward-only cursor pagination, the one way every list pages. Rows are ordered by the sort
 * column and then by id, so equal sort keys still have one stable order; the cursor is the id of
 * the last row seen, positioned by its own sort value. `tenant` scopes both the page and the
 * cursor: an id from another partner or environment is an unknown cursor, never a leak.
 */
export async function paginate<Row>(
  db: DbOrTx,
  options: {
    table: PgTable & TenantTable;
    idColumn: PgColumn;
    sortColumn: PgColumn;
    /** Whose list this is: required, so an unscoped list cannot be written. */
    tenant: Tenant;
    /** A narrower collection within the tenant (one customer's documents), cursor included. */
    within?: SQL | undefined;
    filters?: SQL | undefined;
    params: ListParams;
  },
): Promise<Page<Row>> {
  const { table, idColumn, sortColumn, filters, params } = options;
  const scope = and(ofTenant(table, options.tenant), options.within);
  let after: SQL | undefined;
  if (params.starting_after !== undefined) {
    const [cursor] = await db
      .select({ sortValue: sortColumn, id: idColumn })
      .from(table)
      .where(and(scope, eq(idColumn, params.starting_after)))
      .limit(1);
    if (!cursor) throw problems.invalidCursor(params.starting_after);
    const beyond = params.order === 'desc' ? lt : gt;
    // (sort, id) beyond (cursor.sort, cursor.id), spelled out so it works for either direction.
    after = sql`(${beyond(sortColumn, cursor.sortValue)} or (${eq(sortColumn, cursor.sortValue)} and ${beyond(idColumn, cursor.id)}))`;
  }
  const direction = params.order === 'desc' ? desc : asc;
  const rows = (await db
    .select()
    .from(table)
    .where(and(scope, filters, after))
    .orderBy(direction(sortColumn), direction(idColumn))
    .limit(params.limit + 1)) as Row[];
  return pageOf(rows, params.limit);
}

/** A page from `limit + 1` rows read past the cursor: the extra row only says there are more. */
export function pageOf<T>(rows: T[], limit: number): Page<T> {
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}
