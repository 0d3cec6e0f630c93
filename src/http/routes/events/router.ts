import { z } from 'zod';
import type { Db } from '../../../db/client.js';
import { findEvent, listEvents } from '../../../db/queries/events.js';
import { problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import { tenantOf } from '../../context.js';
import { eventCatalogue } from '../../../domain/webhooks/catalogue.js';
import { pathId } from '../../ids.js';
import { listEnvelope, listQuery, presentPage } from '../../list.js';
import { eventSchema } from './schema.js';
import { presentEvent } from '../../../presenters/events.js';

const eventList = listEnvelope(eventSchema, 'EventList');
/** The records an event can be about, by the prefix of their ids. */
const resourceId = z
  .string()
  .regex(/^(?:cust|co|sim|ln|chg|agr)_[0-9a-f]{32}$/)
  .meta({
    description:
      'Only the events about this record: a customer (`cust_…`: its own events, its offers’ and its loans’), a credit offer (`co_…`), a simulation (`sim_…`), a loan (`ln_…`: its events and its charges’ and agreements’), a charge (`chg_…`) or an agreement (`agr_…`).',
    example: 'ln_0a1b2c3d4e5f60718293a4b5c6d7e8f9',
  });

const eventListQuery = listQuery('evt', ['created_at'], {
  type: z.enum(eventCatalogue).optional().meta({ description: 'Only events of this type.' }),
  resource_id: resourceId.optional(),
});

/** The events written for this partner and environment, newest first by default. */
export function eventRoutes(api: ApiRouter, deps: { db: Db }): void {
  api.add(
    {
      method: 'get',
      path: '/events',
      operationId: 'listEvents',
      summary: 'List events',
      description:
        'Every event, in the order it was written; filter by `type` and by the record it is about (`resource_id`).',
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
      params: z.object({ event_id: pathId('evt', 'event_not_found') }),
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
