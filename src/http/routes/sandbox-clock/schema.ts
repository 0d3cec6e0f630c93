import { z } from 'zod';
import { idField } from '../../ids.js';

export const advanceClockBody = z
  .strictObject({
    advance_to: z.iso.datetime({ offset: true }).meta({
      description:
        'The instant the customer’s clock moves to (RFC 3339): not before its `now`, at most 400 days after it.',
    }),
  })
  .meta({ id: 'AdvanceClockRequest' });

export const customerClockSchema = z
  .object({
    customer_id: idField('cust'),
    now: z.iso.datetime().meta({ description: 'Now on the customer’s clock.' }),
    status: z.enum(['advancing', 'ready']).meta({
      description:
        '`advancing` while what fell due is still happening (events and webhooks included); `ready` once all of it has.',
    }),
  })
  .meta({ id: 'CustomerClock' });
