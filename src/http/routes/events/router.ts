import { z } from 'zod';
import type { Db } from '../../../db/client.js';
import { findEvent, listEvents, type Event } from '../../../db/queries/events.js';
import { problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import { tenantOf } from '../../context.js';
import { listEnvelope, listQuery, presentPage } from '../../list.js';

export const eventSchema = z
  .object({
    id: z.string().meta({ example: 'evt_0a1b2c3d4e5f60718293a4b5c6d7e8f9' }),
    type: z.string().meta({ example: 'customer.kyc_updated' }),
    timestamp: z.iso.datetime(),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Event' });

const eventList = listEnvelope(eventSchema, 'EventList');
const eventListQuery = listQuery(['created_at'], { type: z.string().max(100).optional() });

export function presentEvent(event: Event): z.infer<typeof eventSchema> {
  return {
    id: event.id,
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    data: event.data,
  };
}

/** The events written for this partner and environment, newest first by default. */
export function eventRoutes(api: ApiRouter, deps: { db: Db }): void {
  api.add(
    {
      method: 'get',
      path: '/events',
      operationId: 'listEvents',
      summary: 'List events',
      description: 'Every event, in the order it was written; filter by `type`.',
      tag: 'Events',
      security: 'partner',
      query: eventListQuery,
      responses: { 200: { description: 'A page of events.', schema: eventList } },
      errors: [400],
    },
    async (ctx, { query }) => {
      ctx.body = presentPage(await listEvents(deps.db, tenantOf(ctx), query), presentEvent);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/events/{event_id}',
      operationId: 'getEvent',
      summary: 'Retrieve an event',
      tag: 'Events',
      security: 'partner',
      params: z.object({ event_id: z.string() }),
      responses: { 200: { description: 'The event.', schema: eventSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const event = await findEvent(deps.db, tenantOf(ctx), params.event_id);
      if (!event) throw problems.notFound('event_not_found', `No event ${params.event_id}.`);
      ctx.body = presentEvent(event);
    },
  );
}
