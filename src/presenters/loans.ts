import type { z } from 'zod';
import { repaymentOf, type LoanTransaction, type LoanView } from '../db/queries/loans.js';
import { isPaid, rowAmountDue } from '../domain/loans/allocation.js';
import { daysBetween } from '../domain/business-date.js';
import type { LedgerEntry } from '../domain/ledger/postings.js';
import { presentScheduleRow } from './credit-offers.js';
import type { loanSchema, loanTransactionSchema } from '../http/routes/loans/schema.js';

/** How the signing page's address is made for a loan (it depends on a server key and base URL). */
export type SigningUrl = (loanId: string) => string;

/**
 * The public loan: the API's answer and every `loan.*` event's data, as it stands on `today` (the
 * customer's business date: late charges grow by the day). The schedule is the simulation's, each
 * row with what it has been paid and what it owes (contract §13).
 */
export function presentLoan(
  loan: LoanView,
  signingUrl: SigningUrl,
  today: string,
): z.infer<typeof loanSchema> {
  const figures = loan.figures;
  const rows = repaymentOf(loan).rows;
  // Late charges grow only while the loan is repaying; before it (or once ended) a row owes its face.
  const asOf = loan.status === 'active' ? today : null;
  // A loan cancelled (before its release, or withdrawn after it) or never released owes nothing.
  const owesNothing = loan.status === 'cancelled' || loan.status === 'error';
  // Rows an active agreement covers owe nothing of their own: its rows carry them (contract §17).
  const renegotiated = new Set(loan.renegotiatedRows);
  const dueOf = (row: (typeof rows)[number], on: string) =>
    isPaid(row) || owesNothing || renegotiated.has(row.number)
      ? 0
      : rowAmountDue(row, on, loan.lateChargeRates);
  const schedule = rows.map((row, index) => {
    const status = isPaid(row)
      ? ('paid' as const)
      : renegotiated.has(row.number)
        ? ('renegotiated' as const)
        : row.number <= loan.overdueThrough
          ? ('overdue' as const)
          : ('pending' as const);
    return {
      ...presentScheduleRow(figures.schedule[index]!),
      status,
      amount_due: dueOf(row, asOf ?? row.due_date),
      paid_amount: row.paid_amount,
      paid_at: row.paid_at,
    };
  });
  const overdue = schedule.filter((row) => row.status === 'overdue');
  const unpaid = rows.filter((row) => !isPaid(row));
  return {
    id: loan.id,
    customer_id: loan.customerId,
    credit_offer_id: loan.creditOfferId,
    simulation_id: loan.simulationId,
    status: loan.status,
    currency: 'BRL',
    requested_amount: figures.requested_amount,
    iof_amount: figures.iof_amount,
    principal_amount: figures.principal_amount,
    installments: figures.installments,
    installment_amount: figures.installment_amount,
    monthly_interest_rate: figures.monthly_interest_rate,
    cet_annual: figures.cet_annual,
    first_due_date: figures.first_due_date,
    release_date: figures.release_date,
    release_adjustment: loan.releaseAdjustment,
    disbursement_status: loan.disbursementStatus,
    contract_sha256: loan.contractSha256,
    signing_url: signingUrl(loan.id),
    signatures_required: loan.signers.length,
    signatures_received: loan.signers.filter((s) => s.signedAt !== null).length,
    signers: loan.signers.map((s) => ({
      name: s.name,
      cpf: s.cpf,
      signed_at: s.signedAt?.toISOString() ?? null,
    })),
    disbursement_account: loan.disbursementAccount,
    disbursed_at: loan.disbursedAt?.toISOString() ?? null,
    outstanding_amount: unpaid.reduce((sum, row) => sum + dueOf(row, row.due_date), 0),
    overdue_amount: overdue.reduce((sum, row) => sum + row.amount_due, 0),
    days_overdue: overdue[0] && asOf ? Math.max(0, daysBetween(overdue[0].due_date, asOf)) : 0,
    paid_installments: rows.length - unpaid.length,
    next_due_date: loan.status === 'active' ? (unpaid[0]?.due_date ?? null) : null,
    schedule,
    error: loan.error,
    cancellation_reason: loan.cancellationReason,
    finished_reason: loan.finishedReason,
    refund_due_amount: loan.refundDueAmount,
    written_off_at: loan.writtenOffAt?.toISOString() ?? null,
    assignment_id: loan.assignmentId,
    assigned_to: loan.assignedTo,
    created_at: loan.createdAt.toISOString(),
    updated_at: loan.updatedAt.toISOString(),
  };
}

export function presentLoanTransaction(
  transaction: LoanTransaction,
  entries: readonly LedgerEntry[],
): z.infer<typeof loanTransactionSchema> {
  return {
    id: transaction.id,
    loan_id: transaction.loanId,
    type: transaction.type,
    amount: transaction.amount,
    currency: 'BRL',
    installment_number: transaction.installmentNumber,
    reference: transaction.reference,
    principal_amount: transaction.principalAmount,
    interest_amount: transaction.interestAmount,
    late_fee_amount: transaction.lateFeeAmount,
    late_interest_amount: transaction.lateInterestAmount,
    discount_amount: transaction.discountAmount,
    refund_amount: transaction.refundAmount,
    allocation:
      transaction.allocation?.map((part) => ({
        installment_number: part.number,
        installment_amount: part.installment,
        late_fee_amount: part.late_fee,
        late_interest_amount: part.late_interest,
        discount_amount: part.discount,
      })) ?? null,
    entries: entries.map(({ account, direction, amount }) => ({ account, direction, amount })),
    recorded_by: transaction.actor ?? null,
    approved_by: transaction.approvedBy ?? null,
    occurred_at: transaction.occurredAt.toISOString(),
    created_at: transaction.createdAt.toISOString(),
  };
}
