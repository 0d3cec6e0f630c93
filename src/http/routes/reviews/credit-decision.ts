import { z } from 'zod';
import { decideCredit, type DecideCreditDeps } from '../../../commands/decide-credit.js';
import { MIN_LOAN_AMOUNT } from '../../../domain/credit/offers.js';
import { presentCustomer } from '../../../presenters/customers.js';
import type { ApiRouter } from '../../api-router.js';
import { trimmedText } from '../../text.js';
import { customerParams, customerSchema } from '../customers/schema.js';

/** R$ 1,000,000.00: above it a limit is a typo, not a decision. */
export const MAX_APPROVED_LIMIT = 100_000_000;
/** Offers start at 3 installments; 360 months (30 years) is the longest term a loan takes. */
const MIN_INSTALLMENTS = 3;
const MAX_INSTALLMENTS = 360;

const creditDecisionBody = z
  .discriminatedUnion('decision', [
    z.strictObject({
      decision: z.literal('approve'),
      approved_limit_amount: z.int().min(MIN_LOAN_AMOUNT).max(MAX_APPROVED_LIMIT).meta({
        description: 'The pre-approved limit, centavos: R$ 500.00 to R$ 1,000,000.00.',
      }),
      max_installments: z
        .int()
        .min(MIN_INSTALLMENTS)
        .max(MAX_INSTALLMENTS)
        .optional()
        .meta({
          description: `The longest term offered, ${MIN_INSTALLMENTS} to ${MAX_INSTALLMENTS} monthly installments; default the sandbox table's (12 to 48, read off the cpf).`,
        }),
    }),
    z.strictObject({
      decision: z.literal('reject'),
      reason: trimmedText(1000),
    }),
  ])
  .meta({ id: 'CreditDecisionRequest' });

/**
 * `POST /ops/v1/customers/{id}/credit-decision`: the manual credit decision production waits for
 * (no credit bureau is integrated). An approval gives the customer offers once active.
 */
export function creditDecisionRoutes(api: ApiRouter, deps: DecideCreditDeps): void {
  api.add(
    {
      method: 'post',
      path: '/customers/{customer_id}/credit-decision',
      operationId: 'decideCustomerCredit',
      summary: 'Decide a customer’s credit',
      description:
        'Production’s credit analysis waits for ops (`manual_review_required`): `approve` with a limit (and, if it is not the table’s, the longest term), or `reject` with a reason. An approved customer gets a credit offer as soon as it is `active` (at once if it already is; otherwise when its KYC review activates it). 409 `invalid_state` when the analysis is not waiting (the sandbox decides its own) or the customer is denied.',
      tag: 'Customer review',
      security: 'ops',
      roles: ['kyc_reviewer'],
      idempotent: true,
      params: customerParams,
      body: creditDecisionBody,
      responses: { 200: { description: 'The customer.', schema: customerSchema } },
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      ctx.body = presentCustomer(await decideCredit(deps, params.customer_id, body));
    },
  );
}
