import type { z } from 'zod';
import type { LoanTransaction, LoanView } from '../db/queries/loans.js';
import { standing } from '../domain/loans/repayment.js';
import { presentScheduleRow } from './credit-offers.js';
import type { loanSchema, loanTransactionSchema } from '../http/routes/loans/schema.js';

/** How the signing page's address is made for a loan (it depends on a server key and base URL). */
export type SigningUrl = (loanId: string) => string;

/**
 * The public loan: the API's answer and every `loan.*` event's data, as it stands on `today` (the
 * customer's business date: late charges grow by the day). The schedule is the simulation's, each
 * row with its status; installments are paid oldest first, so the first `paid_installments` rows
 * are the paid ones.
 */
export function presentLoan(
  loan: LoanView,
  signingUrl: SigningUrl,
  today: string,
): z.infer<typeof loanSchema> {
  const figures = loan.figures;
  const paid = loan.paidInstallments;
  const unpaid = figures.schedule.slice(paid);
  const repaying = loan.status === 'active' ? today : null;
  const now = standing(figures.schedule, paid, loan.overdueThrough, repaying, loan.lateChargeRates);
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
    outstanding_amount: unpaid.reduce((sum, row) => sum + row.installment_amount, 0),
    overdue_amount: now.overdueAmount,
    days_overdue: now.daysOverdue,
    paid_installments: paid,
    next_due_date: loan.status === 'active' ? (unpaid[0]?.due_date ?? null) : null,
    schedule: figures.schedule.map((row, index) => ({
      ...presentScheduleRow(row),
      status: now.rows[index]!.status,
      amount_due: now.rows[index]!.amount_due,
      paid_at: loan.paidDates[index] ?? null,
    })),
    error: loan.error,
    cancellation_reason: loan.cancellationReason,
    created_at: loan.createdAt.toISOString(),
    updated_at: loan.updatedAt.toISOString(),
  };
}

export function presentLoanTransaction(
  transaction: LoanTransaction,
): z.infer<typeof loanTransactionSchema> {
  return {
    id: transaction.id,
    loan_id: transaction.loanId,
    type: transaction.type,
    amount: transaction.amount,
    currency: 'BRL',
    installment_number: transaction.installmentNumber,
    occurred_at: transaction.occurredAt.toISOString(),
    created_at: transaction.createdAt.toISOString(),
  };
}
