import { z } from 'zod';
import { loanNotFound } from '../../../commands/loan-deps.js';
import type { Db } from '../../../db/client.js';
import { findLoanForOps } from '../../../db/queries/loans.js';
import { payoutOfLoan } from '../../../db/queries/payouts.js';
import { payoutStatuses } from '../../../domain/payouts/payouts.js';
import { presentPayout } from '../../../presenters/payouts.js';
import type { ApiRouter } from '../../api-router.js';
import { loanParams } from '../loans/schema.js';

const instantOrNull = (description: string) => z.iso.datetime().nullable().meta({ description });
const textOrNull = (description: string) => z.string().nullable().meta({ description });

export const payoutSchema = z
  .object({
    id: z
      .string()
      .meta({ description: 'The payout’s id (`pyt_…`): its idempotency key at the PSP.' }),
    loan_id: z.string(),
    status: z.enum(payoutStatuses).meta({
      description:
        '`sending` (stored, the PSP’s answer not recorded yet), `pending` (the PSP took it), `confirmed`, `failed`, `returned` (the receiving bank gave it back).',
    }),
    amount: z.int().min(1).meta({ description: 'Centavos: the amount released.' }),
    beneficiary: z.object({ pix_key: z.string().meta({ description: 'The borrower’s Pix key.' }) }),
    psp_payout_id: textOrNull('The PSP’s id of the payout, once it answered.'),
    end_to_end_id: textOrNull('The Pix that carried the money (confirmed).'),
    failure_reason: textOrNull('Why it failed, as the PSP said.'),
    return_reason: textOrNull('Why it came back, as the PSP said.'),
    settled_at: instantOrNull('When the PSP confirmed or failed it.'),
    returned_at: instantOrNull('When it came back.'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Payout' });

const loanPayoutSchema = z
  .object({
    loan_id: z.string(),
    payout: payoutSchema.nullable().meta({
      description:
        'The payout that carries out the loan’s disbursement; null when none was sent (a sandbox loan, one not yet claimed, one ops disburse by hand).',
    }),
  })
  .meta({ id: 'LoanPayout' });

/** `GET /ops/v1/loans/{id}/payout`: a production loan's disbursement by payout (contract §16). */
export function payoutRoutes(api: ApiRouter, deps: { db: Db }): void {
  api.add(
    {
      method: 'get',
      path: '/loans/{loan_id}/payout',
      operationId: 'getLoanPayout',
      summary: 'A loan’s payout',
      description:
        'The payout the loan’s workflow sent through the PSP once its disbursement was claimed (contract §16): what was sent, and its outcome as the PSP notified it or answered when asked. While a payout is `sending` or `pending`, ops cannot report the disbursement by hand (409 `invalid_state`).',
      tag: 'Loan operations',
      security: 'ops',
      params: loanParams,
      responses: { 200: { description: 'The loan’s payout, if any.', schema: loanPayoutSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const loan = await findLoanForOps(deps.db, params.loan_id);
      if (!loan) throw loanNotFound(params.loan_id);
      const payout = await payoutOfLoan(
        deps.db,
        { partnerId: loan.partnerId, environment: loan.environment },
        loan.id,
      );
      ctx.body = { loan_id: loan.id, payout: payout ? presentPayout(payout) : null };
    },
  );
}
