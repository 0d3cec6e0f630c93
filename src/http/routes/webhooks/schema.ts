import { z } from 'zod';
import { isEventFilter } from '../../../domain/webhooks/catalogue.js';
import { listEnvelope, listQuery } from '../../list.js';

const url = z
  .url({ protocol: /^https$/, error: 'Must be an https:// URL; plain HTTP is refused.' })
  .max(2048)
  .meta({ example: 'https://hooks.partner.example/embedded-credit' });

const events = z
  .array(
    z
      .string()
      .refine(
        isEventFilter,
        'Not an event of the catalogue, nor a resource wildcard such as loan.*.',
      ),
  )
  .max(50)
  .meta({
    description:
      'Event names or resource wildcards (`loan.*`); empty or omitted means every event.',
  });

export const createEndpointBody = z
  .strictObject({
    url,
    events: events.optional(),
    description: z.string().trim().max(500).optional(),
  })
  .meta({ id: 'CreateWebhookEndpointRequest' });

export const updateEndpointBody = z
  .strictObject({
    url: url.optional(),
    events: events.optional(),
    description: z.string().trim().max(500).nullable().optional(),
    status: z.enum(['enabled', 'disabled']).optional(),
  })
  .refine(
    (body) => Object.values(body).some((value) => value !== undefined),
    'Send at least one field to change.',
  )
  .meta({ id: 'UpdateWebhookEndpointRequest' });

export const rotateBody = z
  .strictObject({
    expire_current_in: z
      .int()
      .min(0)
      .max(86_400)
      .default(3600)
      .meta({ description: 'Seconds the current secret keeps signing beside the new one.' }),
  })
  .meta({ id: 'RotateWebhookSecretRequest' });

export const endpointSchema = z
  .object({
    id: z.string().meta({ example: 'we_0a1b2c3d4e5f60718293a4b5c6d7e8f9' }),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    status: z.enum(['enabled', 'disabled']),
    disabled_reason: z.enum(['manual', 'gone', 'failing']).nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'WebhookEndpoint' });

export const createdEndpointSchema = endpointSchema
  .extend({
    secret: z.string().meta({ description: '`whsec_` + base64; shown only here and on rotation.' }),
  })
  .meta({ id: 'CreatedWebhookEndpoint' });

export const secretSchema = z.object({ secret: z.string() }).meta({ id: 'WebhookSecret' });
export const endpointParams = z.object({
  id: z.string().meta({ example: 'we_0a1b2c3d4e5f60718293a4b5c6d7e8f9' }),
});
export const endpointListQuery = listQuery(['created_at']);
export const endpointList = listEnvelope(endpointSchema, 'WebhookEndpointList');
