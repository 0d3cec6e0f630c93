import { createHash } from 'node:crypto';
import { recordAgreementTerm, type Agreement } from '../db/queries/agreements.js';
import { findCustomerForOps } from '../db/queries/customers.js';
import { repaymentTerms, type LoanView } from '../db/queries/loans.js';
import type { AgreementFigures } from '../domain/loans/agreements.js';
import { clockNow } from './customer-clock.js';
import type { LoanDeps } from './loan-deps.js';

/** Where an agreement's term is stored: ids only, never personal data (as contracts' keys). */
export const agreementTermKey = (agreementId: string) => `agreement-terms/${agreementId}.pdf`;

/**
 * Renders an agreement's term (`renderAgreementTermPdf`) and stores it, answering its key and
 * SHA-256; once this resolves the file is durable. The borrower is the contract's issuer as the
 * loan's first signer names them (what the law keeps of a customer erased since), with the
 * customer's cnpj when there is one.
 */
export async function writeAgreementTerm(
  deps: Pick<LoanDeps, 'db' | 'files' | 'lender' | 'agreements'>,
  loan: LoanView,
  agreement: { id: string; figures: AgreementFigures; acceptanceDeadline: Date },
  issuedAt: Date,
): Promise<{ key: string; sha256: string }> {
  const issuer = loan.signers[0];
  if (!issuer) throw new Error(`loan ${loan.id} has no signer`);
  const customer = await findCustomerForOps(deps.db, loan.customerId);
  const { renderAgreementTermPdf } = await import('../domain/loans/agreement-term-pdf.js');
  const pdf = Buffer.from(
    await renderAgreementTermPdf({
      agreementId: agreement.id,
      loanId: loan.id,
      issuedAt,
      acceptanceDeadline: agreement.acceptanceDeadline,
      environment: loan.environment,
      lender: deps.lender,
      borrower: {
        name: issuer.name,
        cpf: issuer.cpf,
        cnpj: customer?.cnpj ?? null,
        tradingName: customer?.tradingName ?? null,
      },
      figures: agreement.figures,
      lateCharges: repaymentTerms(loan).lateCharges,
      breakDays: deps.agreements.breakDays,
    }),
  );
  const key = agreementTermKey(agreement.id);
  const sha256 = createHash('sha256').update(pdf).digest('hex');
  await deps.files.put(key, pdf, sha256);
  return { key, sha256 };
}

/**
 * The agreement with its term: as it is when it has one; an agreement made before terms existed
 * gets one now (dated the instant it was made, on the customer's clock), written once.
 */
export async function withAgreementTerm(
  deps: Pick<LoanDeps, 'db' | 'files' | 'lender' | 'agreements' | 'clock'>,
  loan: LoanView,
  agreement: Agreement,
): Promise<Agreement & { termKey: string; termSha256: string }> {
  if (agreement.termKey && agreement.termSha256)
    return { ...agreement, termKey: agreement.termKey, termSha256: agreement.termSha256 };
  const term = await writeAgreementTerm(deps, loan, agreement, clockNow(loan, agreement.createdAt));
  const written = (await recordAgreementTerm(deps.db, agreement.id, term)) ?? agreement;
  return { ...written, termKey: term.key, termSha256: term.sha256 };
}
