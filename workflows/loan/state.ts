import { setCurrentDetails } from '@temporalio/workflow';
import { formatBrl } from '../../src/domain/money.js';
import type { LoanInput, LoanProgress } from './messages.js';

/** A run's starting state: what the previous run carried, or a new loan awaiting its signers. */
export const startingProgress = (input: LoanInput): LoanProgress =>
  input.carried ?? { status: 'awaiting_signatures', signed: [], paidInstallments: 0 };

/** The terms the details text counts the progress against. */
type LoanTerms = Pick<LoanInput, 'loanId' | 'customerId' | 'signerCpfs' | 'installmentAmounts'>;

/** What ops see for a loan's workflow in the Temporal UI (markdown). */
export function loanDetails(terms: LoanTerms, progress: LoanProgress): string {
  // Rows are paid from the first on, and from the last back (`apply_to: "last"`); a row between
  // may be paid in part, which the details do not show.
  const unpaid = terms.installmentAmounts.slice(
    progress.paidInstallments,
    progress.lastUnpaid ?? terms.installmentAmounts.length,
  );
  const outstanding = unpaid.reduce((sum, amount) => sum + amount, 0);
  // One line, so the UI's details box shows it whole; it names the customer, which a run after a
  // continue-as-new has no static summary to say.
  return [
    `**Loan:** ${terms.loanId} · **Customer:** ${terms.customerId} · **Status:** ${progress.status}`,
    `**Signatures:** ${progress.signed.length} of ${terms.signerCpfs.length}`,
    `**Paid installments:** ${terms.installmentAmounts.length - unpaid.length} of ${terms.installmentAmounts.length} · **Unpaid installments:** ${formatBrl(outstanding)}`,
    ...((progress.overdueThrough ?? 0) > progress.paidInstallments
      ? [`**Overdue installments:** ${(progress.overdueThrough ?? 0) - progress.paidInstallments}`]
      : []),
  ].join(' · ');
}

/** Shows ops the loan as it stands now: called after every change of the progress. */
export function showLoanDetails(terms: LoanTerms, progress: LoanProgress): void {
  setCurrentDetails(loanDetails(terms, progress));
}
