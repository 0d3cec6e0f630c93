import type { Db } from '../../../db/client.js';
import {
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  rotateSecret,
  updateEndpoint,
} from '../../../db/queries/webhook-endpoints.js';
import { cancelPendingDeliveries } from '../../../db/queries/webhook-deliveries.js';
import { newId } from '../../../domain/ids.js';
import type { SealedBox } from '../../../domain/sealed-box.js';
import { problems } from '../../../errors.js';
import { checkUrlTarget } from '../../../webhooks/address-policy.js';
import { newEndpointSecret } from '../../../webhooks/signature.js';
import type { ApiRouter } from '../../api-router.js';
import { tenantOf } from '../../context.js';
import { presentPage } from '../../list.js';
import { presentEndpoint } from '../../../presenters/webhooks.js';
import {
  createdEndpointSchema,
  endpointList,
  endpointListQuery,
  endpointParams,
  endpointSchema,
  rotateBody,
  secretSchema,
  endpointBodies,
  loopbackHttpTarget,
} from './schema.js';

export interface WebhookRouteDeps {
  db: Db;
  sealedBox: SealedBox;
  allowPrivateTargets: boolean;
  /** Ports a webhook URL may name (WEBHOOK_ALLOWED_PORTS); any with private targets allowed. */
  allowedPorts: readonly number[];
  /** WEBHOOK_ALLOW_LOOPBACK_HTTP: plain http to this machine (development). */
  allowLoopbackHttp: boolean;
  clock: () => Date;
}

const tag = 'Webhooks';
const notFound = (id: string) =>
  problems.notFound('webhook_endpoint_not_found', `No webhook endpoint ${id}.`);

export function webhookEndpointRoutes(api: ApiRouter, deps: WebhookRouteDeps): void {
  const bodies = endpointBodies({
    allowPrivateTargets: deps.allowPrivateTargets,
    allowedPorts: deps.allowedPorts,
    allowLoopbackHttp: deps.allowLoopbackHttp,
  });
  const policy = { allowPrivate: deps.allowPrivateTargets };
  /**
   * What the URL itself shows (an address literal, localhost) is checked now; its port by the
   * body's schema (`endpointBodies`); a name's addresses and the port again at every delivery
   * attempt, where it resolves.
   */
  const assertTarget = (url: string) => {
    if (deps.allowLoopbackHttp && loopbackHttpTarget.test(url)) return;
    const refused = checkUrlTarget(new URL(url), policy);
    if (refused) {
      throw problems.validation([
        {
          path: 'body.url',
          code: 'forbidden_target',
          message: `Webhooks cannot be sent there: ${refused}.`,
        },
      ]);
    }
  };

  api.add(
    {
      method: 'post',
      path: '/webhooks/endpoints',
      operationId: 'createWebhookEndpoint',
      summary: 'Create a webhook endpoint',
      description:
        'HTTPS only. The response carries the signing `secret`, shown only here and on rotation.',
      tag,
      security: 'partner',
      idempotent: true,
      body: bodies.create,
      responses: {
        201: {
          description: 'The endpoint, with its secret.',
          schema: createdEndpointSchema,
          headers: { Location: 'Path of the endpoint.' },
        },
      },
    },
    async (ctx, { body }) => {
      assertTarget(body.url);
      const tenant = tenantOf(ctx);
      const secret = newEndpointSecret();
      const endpoint = await insertEndpoint(deps.db, {
        id: newId('we'),
        partnerId: tenant.partnerId,
        environment: tenant.environment,
        url: body.url,
        events: [...new Set(body.events ?? [])],
        description: body.description ?? null,
        status: 'enabled',
        secretSealed: deps.sealedBox.seal(secret),
      });
      ctx.status = 201;
      ctx.set('Location', `/v3/webhooks/endpoints/${endpoint.id}`);
      ctx.body = { ...presentEndpoint(endpoint), secret };
    },
  );

  api.add(
    {
      method: 'get',
      path: '/webhooks/endpoints',
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints',
      tag,
      security: 'partner',
      query: endpointListQuery,
      responses: { 200: { description: 'A page of endpoints.', schema: endpointList } },
      errors: [400],
    },
    async (ctx, { query }) => {
      ctx.body = presentPage(await listEndpoints(deps.db, tenantOf(ctx), query), presentEndpoint);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/webhooks/endpoints/{id}',
      operationId: 'getWebhookEndpoint',
      summary: 'Retrieve a webhook endpoint',
      tag,
      security: 'partner',
      params: endpointParams,
      responses: { 200: { description: 'The endpoint.', schema: endpointSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const endpoint = await findEndpoint(deps.db, tenantOf(ctx), params.id);
      if (!endpoint) throw notFound(params.id);
      ctx.body = presentEndpoint(endpoint);
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/webhooks/endpoints/{id}',
      operationId: 'updateWebhookEndpoint',
      summary: 'Update a webhook endpoint',
      description: '`status: disabled` stops deliveries without deleting; `enabled` resumes them.',
      tag,
      security: 'partner',
      params: endpointParams,
      body: bodies.update,
      responses: { 200: { description: 'The endpoint after the change.', schema: endpointSchema } },
      errors: [404],
    },
    async (ctx, { params, body }) => {
      if (body.url !== undefined) assertTarget(body.url);
      const status =
        body.status === 'disabled'
          ? { status: 'disabled' as const, disabledReason: 'manual' as const }
          : body.status === 'enabled'
            ? { status: 'enabled' as const, disabledReason: null, consecutiveFailedEvents: 0 }
            : {};
      const tenant = tenantOf(ctx);
      const endpoint = await deps.db.transaction(async (tx) => {
        const updated = await updateEndpoint(tx, tenant, params.id, {
          ...(body.url !== undefined ? { url: body.url } : {}),
          ...(body.events !== undefined ? { events: [...new Set(body.events)] } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...status,
        });
        // Disabling stops deliveries: the pending ones end now, not at their next attempt.
        if (updated && body.status === 'disabled')
          await cancelPendingDeliveries(tx, tenant, params.id);
        return updated;
      });
      if (!endpoint) throw notFound(params.id);
      ctx.body = presentEndpoint(endpoint);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/webhooks/endpoints/{id}',
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint',
      description: 'Its pending deliveries are cancelled.',
      tag,
      security: 'partner',
      params: endpointParams,
      responses: { 204: { description: 'Deleted.' } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const tenant = tenantOf(ctx);
      const deleted = await deps.db.transaction(async (tx) => {
        await cancelPendingDeliveries(tx, tenant, params.id);
        return deleteEndpoint(tx, tenant, params.id);
      });
      if (!deleted) throw notFound(params.id);
      ctx.status = 204;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/webhooks/endpoints/{id}/secret/rotate',
      operationId: 'rotateWebhookSecret',
      summary: 'Rotate the signing secret',
      description:
        'Answers the new secret. The current one keeps signing beside it for `expire_current_in` seconds (default 3600, at most 86400), then stops.',
      tag,
      security: 'partner',
      idempotent: true,
      params: endpointParams,
      body: rotateBody,
      responses: { 200: { description: 'The new secret.', schema: secretSchema } },
      errors: [404],
    },
    async (ctx, { params, body }) => {
      const secret = newEndpointSecret();
      const overlap = body.expire_current_in;
      const rotated = await rotateSecret(deps.db, tenantOf(ctx), params.id, {
        secretSealed: deps.sealedBox.seal(secret),
        previousExpiresAt: overlap > 0 ? new Date(deps.clock().getTime() + overlap * 1000) : null,
      });
      if (!rotated) throw notFound(params.id);
      ctx.body = { secret };
    },
  );
}
