import type { Charge } from '../db/queries/charges.js';

/** The public charge (contract §14): the API's answer and every `charge.*` event's data. */
export function presentCharge(charge: Charge) {
  return {
    id: charge.id,
    loan_id: charge.loanId,
    status: charge.status,
    scope: charge.scope,
    amount: charge.amount,
    currency: 'BRL' as const,
    br_code: charge.brCode,
    txid: charge.txid,
    expires_at: charge.expiresAt.toISOString(),
    paid_at: charge.paidAt?.toISOString() ?? null,
    payment_reference: charge.paymentReference,
    created_at: charge.createdAt.toISOString(),
    updated_at: charge.updatedAt.toISOString(),
  };
}

export type ChargeBody = ReturnType<typeof presentCharge>;
