/**
 * Credit offers: their statuses and the terms a customer is offered. Pure and deterministic — the
 * credit-offers workflow and its activities both run these.
 *
 * Moves (contract §6): available → accepted (a loan was created from it) → available again when
 * that loan is cancelled or fails before disbursement while `valid_until` has not passed, else
 * expired; available → expired at `valid_until`; available → cancelled when the customer is
 * denied. A customer has at most one offer that is available, or accepted with its loan not over.
 */

export const creditOfferStatuses = ['available', 'accepted', 'expired', 'cancelled'] as const;
export type CreditOfferStatus = (typeof creditOfferStatuses)[number];

export const creditOfferEventTypes = {
  available: 'credit_offer.available',
  accepted: 'credit_offer.accepted',
  expired: 'credit_offer.expired',
  cancelled: 'credit_offer.cancelled',
} as const satisfies Record<CreditOfferStatus, string>;

export interface OfferTerms {
  /** Largest amount the customer may request, in centavos. */
  approvedAmount: number;
  /** Smallest amount the customer may request, in centavos. */
  minAmount: number;
  /** Exact decimal text, e.g. `0.0199` (1.99 % a month). */
  monthlyInterestRate: string;
  minInstallments: number;
  maxInstallments: number;
}

/** The smallest loan the service writes: R$ 500.00. */
export const MIN_LOAN_AMOUNT = 50_000;

const sandboxRates = ['0.0199', '0.0249', '0.0299', '0.0349'] as const;
const sandboxMaxInstallments = [12, 24, 36, 48] as const;

/**
 * Sandbox terms, read off the CPF so partners can predict their test data (documented in
 * docs/decisions.md): the limit is the credit analysis's (R$ 5,000–49,000 from digits 2–3);
 * the monthly rate is 1.99 %, 2.49 %, 2.99 % or 3.49 % by the 4th digit mod 4; installments run
 * from 3 to 12, 24, 36 or 48 by the 5th digit mod 4.
 */
export function sandboxOfferTerms(cpf: string, approvedLimitAmount: number): OfferTerms {
  const digit = (position: number) => Number(cpf[position - 1]);
  return {
    approvedAmount: approvedLimitAmount,
    minAmount: Math.min(MIN_LOAN_AMOUNT, approvedLimitAmount),
    monthlyInterestRate: sandboxRates[digit(4) % 4]!,
    minInstallments: 3,
    maxInstallments: sandboxMaxInstallments[digit(5) % 4]!,
  };
}
