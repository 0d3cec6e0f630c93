import { z } from 'zod';
import type { Page } from '../db/pagination.js';
import { idField } from './ids.js';

/** `limit`: the page size of every list. */
export const pageLimit = z.coerce
  .number()
  .int()
  .min(1)
  .max(100)
  .default(25)
  .meta({ description: 'Page size, 1 to 100.' });

/**
 * The query every list takes. `cursor` is the id prefix of the list's items (`starting_after` is
 * one of their ids); `sorts` lists the endpoint's sort fields, the first is the default.
 */
export function listQuery<S extends string, F extends z.ZodRawShape = Record<never, never>>(
  cursor: Parameters<typeof idField>[0],
  sorts: readonly [S, ...S[]],
  filters?: F,
) {
  return z.strictObject({
    limit: pageLimit,
    starting_after: idField(cursor)
      .optional()
      .meta({ description: 'The `id` of the last item of the previous page.' }),
    sort: z
      .enum(sorts)
      .default(sorts[0])
      .meta({ description: 'The field the list is ordered by.' }),
    order: z
      .enum(['asc', 'desc'])
      .default('desc')
      .meta({ description: '`desc`: newest (or largest) first; `asc`: oldest first.' }),
    ...(filters ?? ({} as F)),
  });
}

export function listEnvelope<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      data: z.array(item).meta({ description: 'This page, in the order asked for.' }),
      has_more: z.boolean().meta({
        description:
          'Whether more follow: ask again with `starting_after` = the last `id` of `data`.',
      }),
    })
    .meta({ id });
}

export function presentPage<Row, Out>(page: Page<Row>, present: (row: Row) => Out) {
  return { data: page.rows.map(present), has_more: page.hasMore };
}
