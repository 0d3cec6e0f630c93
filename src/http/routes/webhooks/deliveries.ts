import { z } from 'zod';
import { resendDeliveries } from '../../../commands/resend-deliveries.js';
import {
  findDelivery,
  listDeliveries,
  type WebhookDelivery,
} from '../../../db/queries/webhook-deliveries.js';
import { findEndpoint } from '../../../db/queries/webhook-endpoints.js';
import { ProblemError, problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import { tenantOf, type Tenant } from '../../context.js';
import { idField, pathId } from '../../ids.js';
import { listEnvelope, listQuery, presentPage } from '../../list.js';
import { endpointParams } from './schema.js';

const deliverySchema = z
  .object({
    id: idField('whd'),
    event_id: idField('evt'),
    endpoint_id: idField('we'),
    status: z.enum(['pending', 'succeeded', 'failed', 'cancelled']).meta({
      description:
        '`pending` while attempts remain, `succeeded` (a 2xx), `failed` (ten attempts, or a 410), `cancelled` (the endpoint deleted or disabled).',
    }),
    attempts: z
      .array(
        z.object({
          number: z.int().meta({ description: 'The attempt’s number, from 1.' }),
          started_at: z.iso.datetime().meta({ description: 'When it was sent.' }),
          response_status: z
            .int()
            .nullable()
            .meta({ description: 'Your endpoint’s status (null: no answer).' }),
          error: z
            .string()
            .nullable()
            .meta({ description: 'Why there was no answer (a timeout, a refused target).' }),
          duration_ms: z.int().meta({ description: 'How long it took.' }),
        }),
      )
      .meta({ description: 'Every attempt so far, oldest first.' }),
    next_attempt_at: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'When the next attempt is due (null: none is).' }),
    resend_of: idField('whd')
      .nullable()
      .meta({ description: 'The delivery this one sends again (a resend).' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'WebhookDelivery' });

export function presentDelivery(delivery: WebhookDelivery): z.infer<typeof deliverySchema> {
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    endpoint_id: delivery.endpointId,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.nextAttemptAt?.toISOString() ?? null,
    resend_of: delivery.resendOf,
    created_at: delivery.createdAt.toISOString(),
    updated_at: delivery.updatedAt.toISOString(),
  };
}

const params = endpointParams;
const deliveryParams = params.extend({ delivery_id: pathId('whd', 'delivery_not_found') });
const tag = 'Webhooks';

/** Deliveries of an endpoint: what happened on each attempt, and sending failed ones again. */
export function webhookDeliveryRoutes(
  api: ApiRouter,
  deps: Parameters<typeof resendDeliveries>[0],
): void {
  const enabledEndpoint = async (tenant: Tenant, id: string) => {
    const endpoint = await findEndpoint(deps.db, tenant, id);
    if (!endpoint)
      throw problems.notFound('webhook_endpoint_not_found', `No webhook endpoint ${id}.`);
    return endpoint;
  };
  const assertEnabled = (status: string) => {
    if (status !== 'enabled')
      throw new ProblemError('invalid_state', 'The endpoint is disabled; enable it first.');
  };

  api.add(
    {
      method: 'get',
      path: '/webhooks/endpoints/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: "List an endpoint's deliveries",
      description: 'Each with its attempts: when, the status code or error, and how long it took.',
      tag,
      security: 'partner',
      params,
      query: listQuery('whd', ['created_at'], {
        status: z
          .enum(['pending', 'succeeded', 'failed', 'cancelled'])
          .optional()
          .meta({ description: 'Only deliveries in this status.' }),
      }),
      responses: {
        200: {
          description: 'A page of deliveries.',
          schema: listEnvelope(deliverySchema, 'WebhookDeliveryList'),
        },
      },
      errors: [400, 404],
    },
    async (ctx, { params: { id }, query }) => {
      const tenant = tenantOf(ctx);
      await enabledEndpoint(tenant, id);
      ctx.body = presentPage(await listDeliveries(deps.db, tenant, id, query), presentDelivery);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/webhooks/endpoints/{id}/deliveries/{delivery_id}/resend',
      operationId: 'resendWebhookDelivery',
      summary: 'Resend a delivery',
      description:
        'A new delivery of the same event, with the same `webhook-id`, on a fresh schedule.',
      tag,
      security: 'partner',
      idempotent: true,
      params: deliveryParams,
      responses: { 202: { description: 'The new delivery.', schema: deliverySchema } },
      errors: [404, 409],
    },
    async (ctx, { params: { id, delivery_id } }) => {
      const tenant = tenantOf(ctx);
      assertEnabled((await enabledEndpoint(tenant, id)).status);
      const original = await findDelivery(deps.db, tenant, delivery_id);
      if (!original || original.endpointId !== id) {
        throw problems.notFound(
          'delivery_not_found',
          `No delivery ${delivery_id} for this endpoint.`,
        );
      }
      const [created] = await resendDeliveries(deps, tenant, {
        endpointId: id,
        deliveryIds: [delivery_id],
      });
      ctx.status = 202;
      ctx.body = presentDelivery(created!);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/webhooks/endpoints/{id}/recover',
      operationId: 'recoverWebhookDeliveries',
      summary: 'Resend every failed delivery since a time',
      tag,
      security: 'partner',
      idempotent: true,
      params,
      body: z
        .strictObject({
          since: z.iso
            .datetime({ offset: true })
            .meta({ description: 'Resend the deliveries that failed since this instant.' }),
        })
        .meta({ id: 'RecoverWebhookDeliveriesRequest' }),
      responses: {
        202: {
          description: 'How many deliveries were started again.',
          schema: z.object({
            recovered: z.int().meta({ description: 'How many deliveries were sent again.' }),
          }),
        },
      },
      errors: [404, 409],
    },
    async (ctx, { params: { id }, body }) => {
      const tenant = tenantOf(ctx);
      assertEnabled((await enabledEndpoint(tenant, id)).status);
      const created = await resendDeliveries(deps, tenant, {
        endpointId: id,
        failedSince: new Date(body.since),
      });
      ctx.status = 202;
      ctx.body = { recovered: created.length };
    },
  );
}
