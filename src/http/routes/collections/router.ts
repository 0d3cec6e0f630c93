import { findCollectionSchedule, saveCollectionSchedule } from '../../../db/queries/reminders.js';
import type { Db } from '../../../db/client.js';
import { normalizedSchedule, scheduleProblems } from '../../../domain/reminders/schedule.js';
import { problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import { tenantOf } from '../../context.js';
import { collectionScheduleSchema, putScheduleBody } from './schema.js';

const tag = 'Collections';

const present = (schedule: { steps: unknown; updatedAt: Date } | undefined) => ({
  steps: (schedule?.steps ?? []) as ReturnType<typeof normalizedSchedule>,
  updated_at: schedule?.updatedAt.toISOString() ?? null,
});

/** The régua de cobrança (contract §17): the partner's reminder schedule in one environment. */
export function collectionRoutes(api: ApiRouter, deps: { db: Db }): void {
  api.add(
    {
      method: 'get',
      path: '/collections/schedule',
      operationId: 'getCollectionSchedule',
      summary: 'Your reminder schedule',
      description:
        'The régua de cobrança of this environment: which steps remind each unpaid installment, and how. Never set: no steps.',
      tag,
      security: 'partner',
      responses: { 200: { description: 'The schedule.', schema: collectionScheduleSchema } },
      errors: [],
    },
    async (ctx) => {
      ctx.body = present(await findCollectionSchedule(deps.db, tenantOf(ctx)));
    },
  );

  api.add(
    {
      method: 'put',
      path: '/collections/schedule',
      operationId: 'putCollectionSchedule',
      summary: 'Set your reminder schedule',
      description:
        'Replaces the schedule whole. On each step’s day (09:00 in São Paulo, on the customer’s clock in the sandbox), every unpaid installment of an `active` loan whose due date plus `offset_days` is that day is reminded once per step and channel: `email` (unless the borrower opted out) and/or your event `installment.reminder`. An installment paid before its step is not reminded. A change applies to loans already running from the next day they are looked at. 422 `validation_error` for an offset outside −10…90, two steps on one day (`duplicate_offset`), a channel twice, or more steps than allowed.',
      tag,
      security: 'partner',
      idempotent: true,
      body: putScheduleBody,
      responses: {
        200: { description: 'The schedule as stored.', schema: collectionScheduleSchema },
      },
      errors: [],
    },
    async (ctx, { body }) => {
      const found = scheduleProblems(body.steps);
      if (found.length > 0) throw problems.validation(found);
      ctx.body = present(
        await saveCollectionSchedule(deps.db, tenantOf(ctx), normalizedSchedule(body.steps)),
      );
    },
  );
}
