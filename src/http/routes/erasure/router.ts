import { z } from 'zod';
import { eraseCustomer, type ErasureDeps } from '../../../commands/erase-customer.js';
import { findErasure, reRegistrationsOf, type Erasure } from '../../../db/queries/erasure.js';
import { problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import { customerParams } from '../customers/schema.js';

const erasureSchema = z
  .object({
    customer_id: z.string(),
    status: z.enum(['erasing', 'retained', 'completed']).meta({
      description:
        '`erasing`: the personal data is gone from the records, the files and workflows are being ended; `retained`: what the law keeps (contracts, ledger) waits for `retained_until`; `completed`: nothing personal is left.',
    }),
    requested_by: z
      .object({ type: z.literal('operator'), id: z.string() })
      .meta({ description: 'The operator who asked for it (`op_…` or `break_glass`).' }),
    erased_at: z.iso.datetime(),
    retained_until: z.iso.datetime().nullable().meta({
      description:
        "On the customer's clock: RETENTION_AFTER_LOAN_END after the last loan ended (null: the customer had no loan).",
    }),
    files_deleted_at: z.iso.datetime().nullable(),
    completed_at: z.iso.datetime().nullable(),
    re_registered_as: z.array(z.string()).meta({
      description:
        'Customers registered since with the same identity (cpf, cnpj), recognized by its keyed hash.',
    }),
  })
  .meta({ id: 'CustomerErasure' });

function presentErasure(erasure: Erasure, reRegistrations: string[]) {
  return {
    customer_id: erasure.customerId,
    status: erasure.completedAt
      ? ('completed' as const)
      : erasure.filesDeletedAt
        ? ('retained' as const)
        : ('erasing' as const),
    requested_by: { type: 'operator' as const, id: erasure.requestedBy.id },
    erased_at: erasure.erasedAt.toISOString(),
    retained_until: erasure.retainedUntil?.toISOString() ?? null,
    files_deleted_at: erasure.filesDeletedAt?.toISOString() ?? null,
    completed_at: erasure.completedAt?.toISOString() ?? null,
    re_registered_as: reRegistrations,
  };
}

/** Erasure (contract §15, LGPD art. 18): an administrator's command, audited like every ops one. */
export function erasureRoutes(api: ApiRouter, deps: ErasureDeps): void {
  const tag = 'Erasure';

  api.add(
    {
      method: 'post',
      path: '/customers/{customer_id}/erasure',
      operationId: 'eraseCustomer',
      summary: "Erase a customer's personal data",
      description:
        'At once: name, e-mail, phone, cpf/cnpj, trading name and external id replaced (the identity kept only as a keyed hash, so a re-registration is recognized), documents and selfies deleted, the payloads of the events about the customer redacted, stored idempotent responses showing it deleted, its workflows ended; `customer.erased` is sent. A customer with loans keeps each contract, its signers and its ledger for RETENTION_AFTER_LOAN_END after the last loan ended; they are erased when that passes (on the sandbox clock too). A loan still in force (awaiting signatures, processing, active) refuses the erasure: 409. Asking again answers the erasure made (200).',
      tag,
      security: 'ops',
      roles: ['admin'],
      idempotent: true,
      params: customerParams,
      responses: {
        201: { description: 'The erasure, just made.', schema: erasureSchema },
        200: { description: 'The erasure made before.', schema: erasureSchema },
      },
      errors: [404, 409],
    },
    async (ctx, { params }) => {
      const { erasure, created } = await eraseCustomer(
        deps,
        params.customer_id,
        ctx.state.operator!.actor,
      );
      ctx.state.auditDetail = {
        customer_id: erasure.customerId,
        retained_until: erasure.retainedUntil?.toISOString() ?? null,
        created,
      };
      ctx.status = created ? 201 : 200;
      ctx.body = presentErasure(erasure, await reRegistrationsOf(deps.db, erasure.customerId));
    },
  );

  api.add(
    {
      method: 'get',
      path: '/customers/{customer_id}/erasure',
      operationId: 'getCustomerErasure',
      summary: "A customer's erasure",
      tag,
      security: 'ops',
      roles: ['admin'],
      params: customerParams,
      responses: { 200: { description: 'The erasure.', schema: erasureSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const erasure = await findErasure(deps.db, params.customer_id);
      if (!erasure)
        throw problems.notFound(
          'erasure_not_found',
          `Customer ${params.customer_id} has not been erased.`,
        );
      ctx.body = presentErasure(erasure, await reRegistrationsOf(deps.db, erasure.customerId));
    },
  );
}
