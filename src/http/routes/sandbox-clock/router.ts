import {
  advanceCustomerClock,
  readCustomerClock,
  type ClockDeps,
  type CustomerClockView,
} from '../../../commands/customer-clock.js';
import type { ApiRouter } from '../../api-router.js';
import { sandboxTenantOf } from '../../context.js';
import { customerParams } from '../customers/schema.js';
import { advanceClockBody, customerClockSchema } from './schema.js';

const present = (clock: CustomerClockView) => ({
  customer_id: clock.customerId,
  now: clock.now.toISOString(),
  status: clock.status,
});

/** The sandbox clock of a customer: `/v3/sandbox/customers/{id}/clock`. */
export function sandboxClockRoutes(api: ApiRouter, deps: ClockDeps): void {
  const tag = 'Sandbox';

  api.add(
    {
      method: 'post',
      path: '/sandbox/customers/{customer_id}/clock',
      operationId: 'advanceSandboxClock',
      summary: 'Move a customer’s clock forward',
      description:
        'Everything the service schedules for the customer — sandbox review, offer expiry and renewal, the signature deadline, the sandbox disbursement, due dates and overdue rows — then happens as if `advance_to` had come, in order, each with its events and webhooks. Asynchronous: `advancing` until all of it has happened, then `ready` (`GET` the same path). Business dates follow the clock; `created_at`, `updated_at` and event timestamps stay real time. Never back; at most 400 days a call. Sandbox only.',
      tag,
      security: 'partner',
      idempotent: true,
      params: customerParams,
      body: advanceClockBody,
      responses: { 202: { description: 'The clock, advancing.', schema: customerClockSchema } },
      errors: [404],
    },
    async (ctx, { params, body }) => {
      const clock = await advanceCustomerClock(
        deps,
        sandboxTenantOf(ctx),
        params.customer_id,
        new Date(body.advance_to),
      );
      ctx.status = 202;
      ctx.body = present(clock);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/sandbox/customers/{customer_id}/clock',
      operationId: 'getSandboxClock',
      summary: 'Read a customer’s clock',
      description:
        'Now on the customer’s clock (real time until it is first moved) and whether the last advance is `ready`. Sandbox only.',
      tag,
      security: 'partner',
      params: customerParams,
      responses: { 200: { description: 'The clock.', schema: customerClockSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      ctx.body = present(await readCustomerClock(deps, sandboxTenantOf(ctx), params.customer_id));
    },
  );
}
