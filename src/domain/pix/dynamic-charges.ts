/**
 * Production charges at the lender's PSP (contract §16, "Charges are dynamic"): how a charge of
 * §14 is written in Banco Central's API Pix. Pure — the charge's activity builds the request
 * with these and the PSP answers the BR Code (`pixCopiaECola`).
 *
 * - A charge for rows (`next`, `overdue`) is a charge with a due date (`cobv`); payoff, amount
 *   and withdrawal charges are immediate charges (`cob`) with `calendario.expiracao` at the
 *   charge's end.
 * - The txid is the charge's id without its underscore (`chg` and 32 hex digits: 35 characters,
 *   the API Pix's longest), so every retry of the activity registers the same charge.
 * - Late charges (docs/decisions.md, "Dynamic charges"): the loan's fee is `multa` modality 2
 *   (a percentage of the amount, once) and its late interest `juros` modality 3 (a percentage a
 *   month, on calendar days), which is how `allocation.ts` charges them: the fee once on what is
 *   left of the installment, the interest simple and pro rata die (monthly rate × days ÷ 30) from
 *   the due date. The API Pix writes both as percentages with two decimals, so a rate must be a
 *   whole number of hundredths of a percent (0.0199 is 1.99 %).
 */
import { Decimal } from '../money.js';
import type { ChargeScope } from '../loans/charges.js';
import type { LateChargeRates } from '../loans/repayment.js';

export type PspChargeKind = 'cob' | 'cobv';

/** How a charge of `scope` lives at the PSP: a row's charge has a due date, the others expire. */
export const pspChargeKind = (scope: ChargeScope): PspChargeKind =>
  scope === 'next' || scope === 'overdue' ? 'cobv' : 'cob';

const CHARGE_ID = /^chg_([0-9a-f]{32})$/;

/** The PSP txid of the charge `chargeId` (`[a-zA-Z0-9]{26,35}`, as the API Pix asks). */
export function txidOfCharge(chargeId: string): string {
  const match = CHARGE_ID.exec(chargeId);
  if (!match) throw new Error(`not a charge id: ${JSON.stringify(chargeId)}`);
  return `chg${match[1]}`;
}

/** A rate (decimal text, 0.02) as the API Pix's `valorPerc` (percent, two decimals: "2.00"). */
export function percentOf(rate: string): string {
  const percent = new Decimal(rate).times(100);
  if (!percent.times(100).isInteger())
    throw new RangeError(
      `the API Pix writes a rate as a percentage with two decimals; ${rate} is not (at most 4 decimal places)`,
    );
  return percent.toFixed(2);
}

export interface CobvLateCharges {
  multa?: { modalidade: 2; valorPerc: string };
  juros?: { modalidade: 3; valorPerc: string };
}

/** The loan's late charges in the API Pix's modalities (a rate of 0 is left out). */
export function lateChargesOf(rates: LateChargeRates): CobvLateCharges {
  const fee = new Decimal(rates.feeRate);
  const interest = new Decimal(rates.monthlyInterestRate);
  return {
    ...(fee.isZero() ? {} : { multa: { modalidade: 2, valorPerc: percentOf(rates.feeRate) } }),
    ...(interest.isZero()
      ? {}
      : { juros: { modalidade: 3, valorPerc: percentOf(rates.monthlyInterestRate) } }),
  };
}

export interface CobvCalendar {
  dataDeVencimento: string;
  validadeAposVencimento: number;
}

/**
 * The due date and late charges of a row's charge made on `today` for the row due `rowDueDate`:
 *
 * - Its due date is the row's, or today once the row's has passed (the API Pix refuses a due
 *   date before the charge's creation).
 * - `validadeAposVencimento` is 0: the PSP takes it until the end of its due date and never
 *   after, so it never asks for more than its amount (§14: a charge's amount is fixed for its
 *   life; our charge ends sooner, at the end of today at the latest, and is removed then).
 * - Multa and juros state the loan's late charges when the amount carries none yet (the row is
 *   not late): what the payer's bank shows as the terms after the due date, computed as ours
 *   would be. A late row's amount already carries its fee and its interest to today, so they
 *   are left out: a multa on it would charge the fee twice.
 */
export function cobvTerms(input: {
  rowDueDate: string;
  today: string;
  /** Whether the amount already carries late charges (the row is late today). */
  late: boolean;
  rates: LateChargeRates;
}): { calendario: CobvCalendar; lateCharges: CobvLateCharges } {
  const dataDeVencimento = input.rowDueDate >= input.today ? input.rowDueDate : input.today;
  return {
    calendario: { dataDeVencimento, validadeAposVencimento: 0 },
    lateCharges: input.late ? {} : lateChargesOf(input.rates),
  };
}

/**
 * A cob's `expiracao`: whole seconds from the charge's creation (`createdAt`, fixed by the
 * workflow, so a retry asks the same) to its end; at least 1.
 */
export const cobExpiracao = (createdAt: Date, expiresAt: Date): number =>
  Math.max(1, Math.floor((expiresAt.getTime() - createdAt.getTime()) / 1000));
