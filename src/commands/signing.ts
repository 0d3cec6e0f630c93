import { createHmac } from 'node:crypto';
import { findLoanBySigningToken, findLoanForOps, type LoanView } from '../db/queries/loans.js';
import { normalizeCpf } from '../domain/customers/tax-ids.js';
import { hashSigningToken, loanIdOfSigningToken } from '../domain/loans/signing-token.js';
import { clockNow } from './customer-clock.js';
import { signLoan } from './loan-commands.js';
import type { LoanDeps } from './loan-deps.js';
import {
  checkVerificationCode,
  sendVerificationCode,
  verifiedSession,
  type CodeCheckOutcome,
  type CodeRequestOutcome,
  type VerificationDeps,
} from './verification.js';

/**
 * The hosted signing page's commands (contract §15, "Signing"). The link names a loan; a signer
 * states their cpf and receives a code at the e-mail on record; the code opens a browser session
 * that shows the contract and signs as that signer, and as no one else.
 */
export type SigningDeps = LoanDeps & VerificationDeps;

/** The loan a link opens: a token of the current form checked by its key, or an older one by hash. */
export async function loanOfSigningLink(
  deps: SigningDeps,
  token: string,
): Promise<LoanView | undefined> {
  const loanId = loanIdOfSigningToken(deps.signingLinkKeys, token);
  if (loanId) return findLoanForOps(deps.db, loanId);
  if (token.includes('.') || token.length > 100) return undefined;
  return findLoanBySigningToken(deps.db, hashSigningToken(token));
}

/** The link signs while the loan awaits signatures and its deadline (customer's clock) has not come. */
export const signingLinkOpen = (loan: LoanView, realNow: Date): boolean =>
  loan.status === 'awaiting_signatures' &&
  clockNow(loan, realNow).getTime() < loan.signatureDeadline.getTime();

export type SigningCodeOutcome = CodeRequestOutcome | { kind: 'invalid_cpf' };

/**
 * A person states a cpf on the page (contract §15; issue 37, finding 8). The answer is the same
 * whoever the cpf is — a signer, one who signed already, one without an e-mail, no signer at all —
 * so the page tells nobody who signs: a signer with an e-mail is sent a code (after the answer),
 * everyone else gets a decoy (a code sent nowhere that never verifies), counted by the same
 * limits. Only a text that is no cpf at all is refused as such.
 */
export async function requestSigningCode(
  deps: SigningDeps,
  loan: LoanView,
  typedCpf: string,
  requestedIp: string | null,
): Promise<SigningCodeOutcome> {
  const cpf = normalizeCpf(typedCpf.trim());
  if (!cpf) return { kind: 'invalid_cpf' };
  const signer = loan.signers.find((s) => s.cpf === cpf);
  const tenant = { partnerId: loan.partnerId, environment: loan.environment };
  const subject = { purpose: 'loan_signature' as const, subjectId: loan.id };
  const request = { requestedIp, delivery: 'background' as const };
  if (!signer?.email)
    // Keyed, so the rows keep no cpf anyone typed and one cpf shares its limits.
    return sendVerificationCode(
      deps,
      tenant,
      {
        ...subject,
        person: `decoy:${decoyPerson(deps.signingLinkKeys.current.secret, loan.id, cpf)}`,
      },
      null,
      request,
    );
  return sendVerificationCode(
    deps,
    tenant,
    { ...subject, person: signer.cpf },
    {
      email: signer.email,
      message: (code) => ({
        // Not in the subject: a subject shows on a locked phone's notifications.
        subject: 'Seu código para assinar o contrato de crédito',
        text: [
          `Olá, ${signer.name}.`,
          '',
          `Seu código para assinar a Cédula de Crédito Bancário do empréstimo ${loan.id} é ${code}.`,
          'Ele vale por 10 minutos.',
          '',
          'Não compartilhe este código com ninguém: com ele, alguém pode assinar em seu nome.',
          'Se você não pediu este código, ignore este e-mail; nada será assinado.',
          '',
          deps.lender.name,
        ].join('\n'),
      }),
    },
    request,
  );
}

const decoyPerson = (key: Buffer, loanId: string, cpf: string) =>
  createHmac('sha256', key).update(`signing-decoy:${loanId}:${cpf}`).digest('hex');

export function checkSigningCode(
  deps: SigningDeps,
  loan: LoanView,
  codeId: string,
  presented: string,
  evidence: { ipAddress: string | null; userAgent: string | null },
): Promise<CodeCheckOutcome> {
  return checkVerificationCode(deps, {
    codeId,
    purpose: 'loan_signature',
    subjectId: loan.id,
    presented,
    sandbox: loan.environment === 'sandbox',
    evidence,
  });
}

/** The signer a browser session proved, with the channel their code went to. */
export async function signerOfSession(
  deps: SigningDeps,
  loan: LoanView,
  sessionToken: string | undefined,
) {
  const session = await verifiedSession(deps, 'loan_signature', loan.id, sessionToken);
  const signer = session && loan.signers.find((s) => s.cpf === session.person);
  return signer && session ? { signer, channel: session.channel } : undefined;
}

/** Signs as the session's signer: the cpf is the one the code proved, never one typed in. */
export async function signAsVerifiedSigner(
  deps: SigningDeps,
  loan: LoanView,
  verified: { signer: { cpf: string }; channel: string },
  evidence: { ipAddress: string | null; userAgent: string | null },
): Promise<LoanView> {
  return signLoan(deps, loan, verified.signer.cpf, { ...evidence, channel: verified.channel });
}
