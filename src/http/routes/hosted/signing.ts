import type Router from '@koa/router';
import { answerCodeForm } from './code-form.js';
import {
  checkSigningCode,
  loanOfSigningLink,
  requestSigningCode,
  signAsVerifiedSigner,
  signerOfSession,
  signingLinkOpen,
} from '../../../commands/signing.js';
import { findCustomer } from '../../../db/queries/customers.js';
import type { LoanView } from '../../../db/queries/loans.js';
import { ProblemError } from '../../../errors.js';
import type { AppContext, AppState } from '../../context.js';
import { sendContract } from '../loans/shared.js';
import { messagePage } from './layout.js';
import { evidenceOf, field, html, linkOf } from './respond.js';
import type { HostedDeps } from './router.js';
import { codePage, endedPage, identifyPage, signingPage } from './signing-page.js';

const SESSION_COOKIE = 'signing_session';

/**
 * The contract's signing link (`signing_url`), one per loan for every signer (contract §15):
 *
 * - `GET /hosted/signing/{token}`: without a session, the cpf form (cpfs masked, no figures);
 *   with one, the contract's terms and the form that signs as the session's signer.
 * - `POST …/code {cpf}`: a code to that signer's e-mail on record, within the limits of
 *   `verificationRules`; the same answer for a cpf that does not sign (issue 37).
 * - `POST …/verify {code_id, code}`: a right code opens a session (an HttpOnly cookie bound to
 *   this link, 30 minutes) and redirects to the page.
 * - `POST …/` `{agree}`: signs as the session's signer, never as a cpf typed in.
 * - `GET …/contract`: the PDF, to a session only.
 *
 * Every POST carries the form's CSRF token (forms.ts). Once the loan leaves
 * `awaiting_signatures` or its deadline passes, every one of them is 410.
 */
export function signingRoutes(router: Router<AppState>, deps: HostedDeps): void {
  const signing = deps.signing;
  const notFound = (ctx: AppContext) =>
    html(ctx, 404, messagePage('Link não encontrado', 'Este link de assinatura não é válido.'));

  /** The link's loan while it signs; otherwise answers 404 or 410 and returns nothing. */
  const openLoan = async (ctx: AppContext): Promise<LoanView | undefined> => {
    const loan = await loanOfSigningLink(signing, ctx.params.token ?? '');
    if (!loan) return void notFound(ctx);
    if (!signingLinkOpen(loan, signing.clock())) return void html(ctx, 410, endedPage(loan));
    return loan;
  };
  /** Whether the borrower has a cnpj: the page tells only a consumer of the withdrawal right. */
  const borrowerOf = async (loan: LoanView) => ({
    hasCnpj: Boolean(
      (
        await findCustomer(
          signing.db,
          { partnerId: loan.partnerId, environment: loan.environment },
          loan.customerId,
        )
      )?.cnpj,
    ),
  });
  const sessionOf = (ctx: AppContext, loan: LoanView) =>
    signerOfSession(signing, loan, ctx.cookies.get(SESSION_COOKIE));
  const noSession = (ctx: AppContext, loan: LoanView) =>
    html(
      ctx,
      403,
      identifyPage(loan, linkOf(ctx), {
        kind: 'error',
        text: 'Para ler e assinar, identifique-se com o código enviado ao seu e-mail.',
      }),
    );

  router.get('/hosted/signing/:token', async (ctx) => {
    const loan = await openLoan(ctx);
    if (!loan) return;
    const verified = await sessionOf(ctx, loan);
    html(
      ctx,
      200,
      verified
        ? signingPage(loan, linkOf(ctx), verified.signer, await borrowerOf(loan))
        : identifyPage(loan, linkOf(ctx)),
    );
  });

  router.post('/hosted/signing/:token/code', async (ctx) => {
    const loan = await openLoan(ctx);
    if (!loan) return;
    const refuse = (status: number, text: string) =>
      html(ctx, status, identifyPage(loan, linkOf(ctx), { kind: 'error', text }));
    const cpf = field(ctx, 'cpf');
    if (!cpf) return refuse(422, 'Informe seu CPF.');
    const sent = await requestSigningCode(signing, loan, cpf, ctx.ip || null);
    switch (sent.kind) {
      case 'invalid_cpf':
        return refuse(422, 'Este não é um CPF válido: confira os 11 dígitos.');
      case 'sent':
        return html(ctx, 200, codePage(linkOf(ctx), sent.codeId));
      case 'too_many':
        ctx.set('Retry-After', String(sent.retryAfterSeconds));
        return refuse(
          429,
          `Muitos códigos pedidos para este CPF. Tente de novo em ${waitText(sent.retryAfterSeconds)}.`,
        );
    }
  });

  router.post('/hosted/signing/:token/verify', async (ctx) => {
    const loan = await openLoan(ctx);
    if (!loan) return;
    await answerCodeForm(ctx, {
      path: `/hosted/signing/${encodeURIComponent(ctx.params.token ?? '')}`,
      cookie: SESSION_COOKIE,
      https: deps.https,
      again: (status, text) =>
        html(ctx, status, identifyPage(loan, linkOf(ctx), { kind: 'error', text })),
      codeAgain: (status, codeId, _code, text) =>
        html(ctx, status, codePage(linkOf(ctx), codeId, { kind: 'error', text })),
      check: (codeId, code) => checkSigningCode(signing, loan, codeId, code, evidenceOf(ctx)),
    });
  });

  router.get('/hosted/signing/:token/contract', async (ctx) => {
    const loan = await openLoan(ctx);
    if (!loan) return;
    if (!(await sessionOf(ctx, loan))) return noSession(ctx, loan);
    // A download, not a page: the hosted policy (default-src 'none') would leave a browser's
    // built-in PDF viewer nothing to run in.
    await sendContract(ctx, signing, loan, 'attachment');
  });

  router.post('/hosted/signing/:token', async (ctx) => {
    const loan = await openLoan(ctx);
    if (!loan) return;
    const verified = await sessionOf(ctx, loan);
    if (!verified) return noSession(ctx, loan);
    const borrower = await borrowerOf(loan);
    const refuse = (status: number, text: string) =>
      html(
        ctx,
        status,
        signingPage(loan, linkOf(ctx), verified.signer, borrower, { kind: 'error', text }),
      );
    if (verified.signer.signedAt)
      return html(
        ctx,
        200,
        signingPage(loan, linkOf(ctx), verified.signer, borrower, {
          kind: 'ok',
          text: 'Você já tinha assinado este contrato; nada mudou.',
        }),
      );
    if (field(ctx, 'agree') !== 'yes')
      return refuse(422, 'Confirme que leu o contrato e concorda.');
    try {
      const signed = await signAsVerifiedSigner(signing, loan, verified, evidenceOf(ctx));
      const signer = signed.signers.find((s) => s.cpf === verified.signer.cpf) ?? verified.signer;
      html(
        ctx,
        200,
        signingPage(signed, linkOf(ctx), signer, borrower, {
          kind: 'ok',
          text: 'Assinatura registrada. Obrigado!',
        }),
      );
    } catch (error) {
      if (error instanceof ProblemError && error.code === 'invalid_state')
        return refuse(409, 'Este contrato não recebe mais assinaturas.');
      throw error;
    }
  });
}

/** `30 segundos`, `5 minutos`: how long to wait, as a person reads it. */
export const waitText = (seconds: number) =>
  seconds < 90 ? `${seconds} segundos` : `${Math.ceil(seconds / 60)} minutos`;
