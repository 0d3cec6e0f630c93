import { findAgreementOfLink, type Agreement } from '../db/queries/agreements.js';
import { findCustomerForOps } from '../db/queries/customers.js';
import { findLoanForOps, type LoanView } from '../db/queries/loans.js';
import { agreementIdOfAcceptanceToken } from '../domain/loans/acceptance-token.js';
import type { Tenant } from '../domain/tenant.js';
import { acceptLoanAgreement } from './agreements.js';
import { clockNow } from './customer-clock.js';
import type { SigningDeps } from './signing.js';
import {
  checkVerificationCode,
  sendVerificationCode,
  verifiedSession,
  type CodeCheckOutcome,
  type CodeRequestOutcome,
} from './verification.js';

/**
 * The hosted acceptance page's commands (contract §17, "the borrower accepts on that hosted page
 * with the e-mailed code (§15)"): the link names an agreement; a code sent to the borrower's
 * e-mail on record opens a browser session that shows the term and accepts it, through the same
 * acceptance as the sandbox helper's (`acceptLoanAgreement`).
 */
export type AcceptanceDeps = SigningDeps;

export interface AcceptanceLink {
  agreement: Agreement;
  loan: LoanView;
  tenant: Tenant;
}

/** The agreement a link opens, with its loan; undefined for a link that names none. */
export async function agreementOfAcceptanceLink(
  deps: AcceptanceDeps,
  token: string,
): Promise<AcceptanceLink | undefined> {
  const id = agreementIdOfAcceptanceToken(deps.signingLinkKeys, token);
  const agreement = id && (await findAgreementOfLink(deps.db, id));
  const loan = agreement && (await findLoanForOps(deps.db, agreement.loanId));
  if (!agreement || !loan) return undefined;
  return {
    agreement,
    loan,
    tenant: { partnerId: agreement.partnerId, environment: agreement.environment },
  };
}

/** The link takes an acceptance while the agreement waits for one and its deadline has not come. */
export const acceptanceOpen = ({ agreement, loan }: AcceptanceLink, realNow: Date): boolean =>
  agreement.status === 'pending_acceptance' &&
  clockNow(loan, realNow).getTime() <= agreement.acceptanceDeadline.getTime();

export type AcceptanceCodeOutcome = CodeRequestOutcome | { kind: 'no_email' };

/**
 * A code to the borrower's e-mail on record (the loan's customer: the agreement has one person to
 * accept it, so nothing is typed to say who), within the limits of `verificationRules`.
 */
export async function requestAcceptanceCode(
  deps: AcceptanceDeps,
  link: AcceptanceLink,
  requestedIp: string | null,
): Promise<AcceptanceCodeOutcome> {
  const customer = await findCustomerForOps(deps.db, link.loan.customerId);
  if (!customer?.email) return { kind: 'no_email' };
  const { agreement, loan } = link;
  return sendVerificationCode(
    deps,
    link.tenant,
    { purpose: 'agreement_acceptance', subjectId: agreement.id, person: customer.id },
    {
      email: customer.email,
      message: (code) => ({
        // Not in the subject: a subject shows on a locked phone's notifications.
        subject: 'Seu código para aceitar o acordo de pagamento',
        text: [
          `Olá, ${customer.name}.`,
          '',
          `Seu código para aceitar o acordo de pagamento ${agreement.id}, do empréstimo ${loan.id}, é ${code}.`,
          'Ele vale por 10 minutos.',
          '',
          'Não compartilhe este código com ninguém: com ele, alguém pode aceitar o acordo em seu nome.',
          'Se você não pediu este código, ignore este e-mail; nada será aceito.',
          '',
          deps.lender.name,
        ].join('\n'),
      }),
    },
    { requestedIp },
  );
}

export function checkAcceptanceCode(
  deps: AcceptanceDeps,
  link: AcceptanceLink,
  codeId: string,
  presented: string,
  evidence: { ipAddress: string | null; userAgent: string | null },
): Promise<CodeCheckOutcome> {
  return checkVerificationCode(deps, {
    codeId,
    purpose: 'agreement_acceptance',
    subjectId: link.agreement.id,
    presented,
    sandbox: link.agreement.environment === 'sandbox',
    evidence,
  });
}

/** The borrower's browser session on this link, with the channel their code went to. */
export async function borrowerOfSession(
  deps: AcceptanceDeps,
  link: AcceptanceLink,
  sessionToken: string | undefined,
): Promise<{ channel: string } | undefined> {
  const session = await verifiedSession(
    deps,
    'agreement_acceptance',
    link.agreement.id,
    sessionToken,
  );
  return session && session.person === link.loan.customerId
    ? { channel: session.channel }
    : undefined;
}

export type PageAcceptance =
  | { kind: 'accepted'; agreement: Agreement }
  /** The term shown is not the agreement's (a page older than its term): nothing recorded. */
  | { kind: 'term_changed' }
  | { kind: 'not_open'; agreement: Agreement };

/**
 * Accepts as the session's borrower the term the page showed (`shownSha256`, the form's): the
 * channel is the session's code's, the hash the term's. An agreement no longer waiting for an
 * acceptance is refused (`not_open`), never accepted twice.
 */
export async function acceptOnPage(
  deps: AcceptanceDeps,
  link: AcceptanceLink,
  session: { channel: string },
  shownSha256: string,
  evidence: { ipAddress: string | null; userAgent: string | null },
): Promise<PageAcceptance> {
  if (!link.agreement.termSha256 || shownSha256 !== link.agreement.termSha256)
    return { kind: 'term_changed' };
  try {
    const answer = await acceptLoanAgreement(deps, link.tenant, link.agreement, {
      ...evidence,
      channel: session.channel,
      sha256: link.agreement.termSha256,
    });
    return answer.accepted
      ? { kind: 'accepted', agreement: answer.agreement }
      : { kind: 'not_open', agreement: answer.agreement };
  } catch (error) {
    // Lapsed at its deadline, just now.
    const lapsed = await findAgreementOfLink(deps.db, link.agreement.id);
    if (lapsed && lapsed.status !== 'pending_acceptance')
      return { kind: 'not_open', agreement: lapsed };
    throw error;
  }
}
