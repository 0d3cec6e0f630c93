import type { Payout } from '../db/queries/payouts.js';

/** A loan's payout as ops see it (contract §16): what was sent, and what the PSP said of it. */
export function presentPayout(payout: Payout) {
  return {
    id: payout.id,
    loan_id: payout.loanId,
    status: payout.status,
    amount: payout.amount,
    beneficiary: { pix_key: payout.beneficiary.pixKey },
    psp_payout_id: payout.pspPayoutId,
    end_to_end_id: payout.endToEndId,
    failure_reason: payout.failureReason,
    return_reason: payout.returnReason,
    settled_at: payout.settledAt?.toISOString() ?? null,
    returned_at: payout.returnedAt?.toISOString() ?? null,
    created_at: payout.createdAt.toISOString(),
    updated_at: payout.updatedAt.toISOString(),
  };
}
