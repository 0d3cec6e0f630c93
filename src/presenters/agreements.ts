import type { Agreement, AgreementSimulation } from '../db/queries/agreements.js';
import type { AgreementFigures } from '../domain/loans/agreements.js';
import { Decimal } from '../domain/money.js';

/** The figures an agreement and its simulation share (contract §17; docs/agreements.md). */
function presentFigures(figures: AgreementFigures) {
  return {
    currency: 'BRL' as const,
    date: figures.date,
    rows: figures.scope,
    covered_rows: figures.rows.map((row) => ({
      number: row.number,
      due_date: row.due_date,
      status: row.status,
      installment_amount: row.installment_amount,
      late_fee_amount: row.late_fee_amount,
      late_interest_amount: row.late_interest_amount,
      value_amount: row.value_amount,
    })),
    principal_amount: figures.principal_amount,
    interest_amount: figures.interest_amount,
    late_fee_amount: figures.late_fee_amount,
    late_interest_amount: figures.late_interest_amount,
    debt_amount: figures.debt_amount,
    discount_amount: figures.discount_amount,
    agreed_amount: figures.agreed_amount,
    installments: figures.installments,
    first_due_date: figures.first_due_date,
    monthly_interest_rate: new Decimal(figures.monthly_interest_rate).toNumber(),
    total_amount: figures.total_amount,
    total_interest_amount: figures.total_interest_amount,
    schedule: figures.schedule.map((row) => ({ ...row })),
  };
}

/** The public agreement simulation: the API's answer. */
export function presentAgreementSimulation(simulation: AgreementSimulation) {
  return {
    id: simulation.id,
    loan_id: simulation.loanId,
    ...presentFigures(simulation.figures),
    valid_until: simulation.validUntil.toISOString(),
    created_at: simulation.createdAt.toISOString(),
  };
}

/** The acceptance page's address of an agreement (`acceptanceUrls`). */
export type AcceptanceUrl = (agreementId: string) => string;

/** The public agreement: the API's answer and every `loan.agreement_*` event's `agreement`. */
export function presentAgreement(agreement: Agreement, acceptanceUrl: AcceptanceUrl) {
  const paid = agreement.book?.repayment.rows;
  return {
    id: agreement.id,
    loan_id: agreement.loanId,
    simulation_id: agreement.simulationId,
    status: agreement.status,
    ...presentFigures(agreement.figures),
    // What its payments paid of each row (docs/agreements.md: its book, once money reached it).
    schedule: agreement.figures.schedule.map((row, index) => ({
      ...row,
      paid_amount: paid?.[index]?.paid_amount ?? 0,
      paid_at: paid?.[index]?.paid_at ?? null,
    })),
    acceptance_url: acceptanceUrl(agreement.id),
    term_sha256: agreement.termSha256,
    acceptance_deadline: agreement.acceptanceDeadline.toISOString(),
    accepted_at: agreement.acceptedAt?.toISOString() ?? null,
    active_at: agreement.activeAt?.toISOString() ?? null,
    ended_at: agreement.endedAt?.toISOString() ?? null,
    created_at: agreement.createdAt.toISOString(),
    updated_at: agreement.updatedAt.toISOString(),
  };
}

export type AgreementBody = ReturnType<typeof presentAgreement>;
