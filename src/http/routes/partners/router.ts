import { z } from 'zod';
import { createPartner } from '../../../commands/create-partner.js';
import type { Db } from '../../../db/client.js';
import type { ApiRouter } from '../../api-router.js';

const issuedCredential = z.object({ client_id: z.string(), client_secret: z.string() });

export const createPartnerBody = z
  .strictObject({ name: z.string().trim().min(1).max(200) })
  .meta({ id: 'CreatePartnerRequest' });

export const createdPartner = z
  .object({
    partner_id: z.string(),
    name: z.string(),
    credentials: z.object({ sandbox: issuedCredential, production: issuedCredential }),
  })
  .meta({ id: 'CreatedPartner' });

/** Ops: onboarding a partner issues one sandbox and one production credential. */
export function partnerRoutes(api: ApiRouter, deps: { db: Db }): void {
  api.add(
    {
      method: 'post',
      path: '/partners',
      operationId: 'createPartner',
      summary: 'Create a partner with a sandbox and a production credential',
      description: 'The secrets appear only in this response (and in its idempotent replays).',
      tag: 'Partners',
      security: 'ops',
      roles: ['admin'],
      idempotent: true,
      body: createPartnerBody,
      responses: {
        201: { description: 'The partner and its two credentials.', schema: createdPartner },
      },
    },
    async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = await createPartner(deps.db, { name: body.name });
    },
  );
}
