import { denyCustomer, reviewCustomer } from '../../../commands/change-customer.js';
import type { CustomerDeps } from '../../../commands/customer-deps.js';
import { findCustomerForOps } from '../../../db/queries/customers.js';
import { problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import { sandboxTenantOf, type AppContext, type Tenant } from '../../context.js';
import { presentCustomer } from '../../../presenters/customers.js';
import { customerParams, customerSchema, denyBody, reviewBody } from '../customers/schema.js';

type Resolve = (ctx: AppContext, customerId: string) => Promise<Tenant>;

/**
 * KYC review and denial. Production decisions come from ops (`/ops/v1/customers/…`, any partner's
 * customer); in the sandbox the partner makes them itself (`/v3/sandbox/customers/…`), which a
 * production token does not even see.
 */
export function reviewRoutes(
  api: ApiRouter,
  deps: CustomerDeps,
  audience: 'ops' | 'sandbox',
): void {
  const prefix = audience === 'ops' ? '/customers' : '/sandbox/customers';
  const resolve: Resolve =
    audience === 'ops'
      ? async (_ctx, customerId) => {
          const customer = await findCustomerForOps(deps.db, customerId);
          if (!customer)
            throw problems.notFound('customer_not_found', `No customer ${customerId}.`);
          return { partnerId: customer.partnerId, environment: customer.environment };
        }
      : (ctx) => Promise.resolve(sandboxTenantOf(ctx));
  const tag = audience === 'ops' ? 'Customer review' : 'Sandbox';

  api.add(
    {
      method: 'post',
      path: `${prefix}/{customer_id}/review`,
      operationId: audience === 'ops' ? 'reviewCustomer' : 'sandboxReviewCustomer',
      summary: 'Review submitted KYC items',
      description:
        '`approve` or `reject` submitted items; `request_correction` asks for a field (`email`, `phone`, `name`, `trading_name`) to be corrected. Answers the customer after the decisions.',
      tag,
      security: audience === 'ops' ? 'ops' : 'partner',
      ...(audience === 'ops' ? { roles: ['kyc_reviewer' as const] } : {}),
      idempotent: true,
      params: customerParams,
      body: reviewBody,
      responses: { 200: { description: 'The customer after the review.', schema: customerSchema } },
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const tenant = await resolve(ctx, params.customer_id);
      ctx.body = presentCustomer(
        await reviewCustomer(deps, tenant, params.customer_id, body.items),
      );
    },
  );

  api.add(
    {
      method: 'post',
      path: `${prefix}/{customer_id}/deny`,
      operationId: audience === 'ops' ? 'denyCustomer' : 'sandboxDenyCustomer',
      summary: 'Deny a customer permanently',
      description: 'Final, from any status; emits `customer.denied` with the reason.',
      tag,
      security: audience === 'ops' ? 'ops' : 'partner',
      ...(audience === 'ops' ? { roles: ['kyc_reviewer' as const] } : {}),
      idempotent: true,
      params: customerParams,
      body: denyBody,
      responses: { 200: { description: 'The denied customer.', schema: customerSchema } },
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const tenant = await resolve(ctx, params.customer_id);
      ctx.body = presentCustomer(await denyCustomer(deps, tenant, params.customer_id, body.reason));
    },
  );
}
