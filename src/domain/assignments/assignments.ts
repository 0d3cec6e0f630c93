/**
 * Assignments (cessão, contract §19): the batch's states and which loans may be sold. Pure.
 */

/** `draft` → `submitted` → `settled`; `draft` or `submitted` → `cancelled`. */
export const assignmentStatuses = ['draft', 'submitted', 'settled', 'cancelled'] as const;
export type AssignmentStatus = (typeof assignmentStatuses)[number];

/**
 * The money of a settled sale (docs/assignments.md): the buyer pays the price
 * (`price_received`), the lender remits each day's collections to the buyer (`remitted`).
 */
export const assignmentTransactionTypes = ['price_received', 'remitted'] as const;
export type AssignmentTransactionType = (typeof assignmentTransactionTypes)[number];

/** The most loans one batch sells (one request, one settlement transaction). */
export const MAX_ASSIGNMENT_LOANS = 500;

/** What decides whether a loan can be sold. */
export interface AssignableLoan {
  environment: 'sandbox' | 'production';
  status: string;
  disbursementStatus: string;
  writtenOffAt: Date | null;
  assignmentId: string | null;
  /** An agreement on it that has not ended (contract §17). */
  liveAgreement: boolean;
  /** A live loan refinances it (awaiting signatures or its release). */
  beingRefinanced: boolean;
}

/**
 * Why a loan cannot be sold, or null when it can: a production loan, active, its money confirmed
 * out, not written off, with no live agreement or refinancing, not sold already. (A loan in another
 * live batch is refused by the database's index, and answered the same way.)
 */
export function whyNotAssignable(loan: AssignableLoan): string | null {
  if (loan.environment !== 'production')
    return 'it is a sandbox loan: only production loans are sold';
  if (loan.assignmentId) return 'it was sold already';
  if (loan.status !== 'active') return `it is ${loan.status}, not active`;
  if (loan.disbursementStatus !== 'confirmed') return 'its disbursement is not confirmed';
  if (loan.writtenOffAt) return 'it was written off';
  if (loan.liveAgreement) return 'a payment agreement on it has not ended';
  if (loan.beingRefinanced) return 'a new loan refinances it';
  return null;
}
