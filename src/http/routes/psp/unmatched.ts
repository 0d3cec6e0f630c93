import { z } from 'zod';
import type { Db } from '../../../db/client.js';
import { pageOf } from '../../../db/pagination.js';
import { unmatchedPix, type ReceivedPix } from '../../../db/queries/charges.js';
import { problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import { pageLimit, presentPage } from '../../list.js';

const endToEndId = z.string().regex(/^[a-zA-Z0-9]{32}$/);

const unmatchedPixSchema = z
  .object({
    end_to_end_id: z.string().meta({ description: 'The payment system’s id of the Pix.' }),
    txid: z
      .string()
      .nullable()
      .meta({ description: 'The txid it came with: no charge has it (null: none).' }),
    amount: z.int().meta({ description: 'Centavos received.' }),
    currency: z.literal('BRL'),
    paid_at: z.iso.datetime().meta({ description: 'When it was paid, as the PSP said.' }),
    received_at: z.iso.datetime().meta({ description: 'When the service stored it.' }),
  })
  .meta({ id: 'UnmatchedPix' });

const unmatchedPixList = z
  .object({ data: z.array(unmatchedPixSchema), has_more: z.boolean() })
  .meta({ id: 'UnmatchedPixList' });

const unmatchedPixQuery = z.strictObject({
  limit: pageLimit,
  starting_after: endToEndId
    .optional()
    .meta({ description: 'The `end_to_end_id` of the last item of the previous page.' }),
});

const present = (pix: ReceivedPix) => ({
  end_to_end_id: pix.endToEndId,
  txid: pix.txid,
  amount: pix.amount,
  currency: 'BRL' as const,
  paid_at: pix.paidAt.toISOString(),
  received_at: pix.receivedAt.toISOString(),
});

/**
 * `GET /ops/v1/unmatched-pix`: Pix whose txid named no charge of production (contract §14), oldest
 * first: money on the lender's account that no loan booked, kept until ops return or place it.
 */
export function unmatchedPixRoutes(api: ApiRouter, deps: { db: Db }): void {
  api.add(
    {
      method: 'get',
      path: '/unmatched-pix',
      operationId: 'listUnmatchedPix',
      summary: 'Pix that matched no charge',
      description:
        'Pix the PSP notified whose `txid` names no charge (or that came without one), oldest first. Never dropped: each stays here, and counts in the `unmatched_pix` gauge of `/metrics`, until ops deal with it.',
      tag: 'Pix',
      security: 'ops',
      query: unmatchedPixQuery,
      responses: { 200: { description: 'A page of unmatched Pix.', schema: unmatchedPixList } },
      errors: [400],
    },
    async (ctx, { query }) => {
      const rows = await unmatchedPix(deps.db, query.limit + 1, query.starting_after);
      if (!rows) throw problems.invalidCursor(query.starting_after ?? '');
      ctx.body = presentPage(pageOf(rows, query.limit), present);
    },
  );
}
