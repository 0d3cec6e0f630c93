import type { z } from 'zod';
import type { WebhookEndpoint } from '../db/queries/webhook-endpoints.js';
import type { endpointSchema } from '../http/routes/webhooks/schema.js';

export function presentEndpoint(endpoint: WebhookEndpoint): z.infer<typeof endpointSchema> {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}
