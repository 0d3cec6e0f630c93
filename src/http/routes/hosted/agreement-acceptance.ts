import type Router from '@koa/router';
import { answerCodeForm } from './code-form.js';
import {
  acceptanceOpen,
  acceptOnPage,
  agreementOfAcceptanceLink,
  borrowerOfSession,
  checkAcceptanceCode,
  requestAcceptanceCode,
  type AcceptanceLink,
} from '../../../commands/agreement-acceptance.js';
import { withAgreementTerm } from '../../../commands/agreement-term.js';
import type { Agreement } from '../../../db/queries/agreements.js';
import { CodeNotSentError } from '../../../commands/verification.js';
import type { AppContext, AppState } from '../../context.js';
import { sendFile } from '../../send-file.js';
import {
  agreementLinkPath,
  codePage,
  endedPage,
  identifyPage,
  termsPage,
} from './agreement-page.js';
import { messagePage } from './layout.js';
import { evidenceOf, field, html, linkOf } from './respond.js';
import type { HostedDeps } from './router.js';
import { waitText } from './signing.js';

const SESSION_COOKIE = 'agreement_session';

/**
 * A payment agreement's acceptance link (`acceptance_url`, contract §17), the signing page's parts
 * for one person, the borrower:
 *
 * - `GET /hosted/agreements/{token}`: without a session, a page that sends the code (no figure);
 *   with one, the agreement's terms, its term PDF's hash and the form that accepts it.
 * - `POST …/code`: a code to the borrower's e-mail on record (`verificationRules`' limits).
 * - `POST …/verify {code_id, code}`: a right code opens a session (an HttpOnly cookie bound to
 *   this link, 30 minutes) and redirects to the page.
 * - `POST …/` `{agree, term_sha256}`: accepts the term shown, as the session's borrower.
 * - `GET …/term`: the term's PDF, to a session only (the stored bytes, every time).
 *
 * Every POST carries the form's CSRF token (forms.ts) and every request spends from the hosted
 * router's throttle. Once the agreement no longer waits for an acceptance (or its deadline
 * passed) the code and acceptance forms are refused (410; an acceptance again, 409): a session
 * still reads what was accepted.
 */
export function agreementAcceptanceRoutes(router: Router<AppState>, deps: HostedDeps): void {
  const signing = deps.signing;

  /** The link's agreement; otherwise answers 404 and returns nothing. */
  const found = async (ctx: AppContext): Promise<AcceptanceLink | undefined> => {
    const link = await agreementOfAcceptanceLink(signing, ctx.params.token ?? '');
    if (!link)
      html(ctx, 404, messagePage('Link não encontrado', 'Este link de acordo não é válido.'));
    return link;
  };
  const ended = (ctx: AppContext, link: AcceptanceLink) =>
    html(ctx, 410, endedPage(link.agreement, link.agreement.status === 'pending_acceptance'));
  /** The link's agreement while it takes an acceptance; otherwise answers 404 or 410. */
  const open = async (ctx: AppContext): Promise<AcceptanceLink | undefined> => {
    const link = await found(ctx);
    if (!link) return undefined;
    if (!acceptanceOpen(link, signing.clock())) return void ended(ctx, link);
    return link;
  };
  const sessionOf = (ctx: AppContext, link: AcceptanceLink) =>
    borrowerOfSession(signing, link, ctx.cookies.get(SESSION_COOKIE));
  const noSession = (ctx: AppContext, link: AcceptanceLink) =>
    html(
      ctx,
      403,
      identifyPage(link.agreement, linkOf(ctx), {
        kind: 'error',
        text: 'Para ver e aceitar o acordo, identifique-se com o código enviado ao seu e-mail.',
      }),
    );

  router.get('/hosted/agreements/:token', async (ctx) => {
    const link = await found(ctx);
    if (!link) return;
    const isOpen = acceptanceOpen(link, signing.clock());
    const session = await sessionOf(ctx, link);
    if (session && (isOpen || link.agreement.acceptedAt)) {
      const agreement = await withAgreementTerm(signing, link.loan, link.agreement);
      return html(ctx, 200, termsPage(agreement, linkOf(ctx), isOpen));
    }
    if (!isOpen) return ended(ctx, link);
    html(ctx, 200, identifyPage(link.agreement, linkOf(ctx)));
  });

  router.post('/hosted/agreements/:token/code', async (ctx) => {
    const link = await open(ctx);
    if (!link) return;
    const refuse = (status: number, text: string) =>
      html(ctx, status, identifyPage(link.agreement, linkOf(ctx), { kind: 'error', text }));
    try {
      const sent = await requestAcceptanceCode(signing, link, ctx.ip || null);
      switch (sent.kind) {
        case 'no_email':
          return refuse(409, 'Não há e-mail cadastrado para enviar o código. Fale com a empresa.');
        case 'too_many':
          ctx.set('Retry-After', String(sent.retryAfterSeconds));
          return refuse(
            429,
            `Você pediu muitos códigos. Tente de novo em ${waitText(sent.retryAfterSeconds)}.`,
          );
        case 'sent':
          return html(ctx, 200, codePage(linkOf(ctx), sent.codeId, sent.channel));
      }
    } catch (error) {
      if (!(error instanceof CodeNotSentError)) throw error;
      ctx.set('Retry-After', '30');
      refuse(503, 'Não conseguimos enviar o código agora. Tente de novo.');
    }
  });

  router.post('/hosted/agreements/:token/verify', async (ctx) => {
    const link = await open(ctx);
    if (!link) return;
    await answerCodeForm(ctx, {
      path: agreementLinkPath(ctx.params.token ?? ''),
      cookie: SESSION_COOKIE,
      https: deps.https,
      again: (status, text) =>
        html(ctx, status, identifyPage(link.agreement, linkOf(ctx), { kind: 'error', text })),
      codeAgain: (status, codeId, code, text) =>
        html(ctx, status, codePage(linkOf(ctx), codeId, code?.channel, { kind: 'error', text })),
      check: (codeId, code) => checkAcceptanceCode(signing, link, codeId, code, evidenceOf(ctx)),
    });
  });

  router.get('/hosted/agreements/:token/term', async (ctx) => {
    const link = await found(ctx);
    if (!link) return;
    if (!(await sessionOf(ctx, link))) return noSession(ctx, link);
    const agreement = await withAgreementTerm(signing, link.loan, link.agreement);
    const file = await signing.files.open(agreement.termKey);
    if (!file) throw new Error(`term of ${agreement.id} missing from the file store`);
    // A download, not a page: the hosted policy (default-src 'none') leaves a browser's PDF
    // viewer nothing to run in.
    sendFile(ctx, file, 'application/pdf', `attachment; filename="acordo-${agreement.id}.pdf"`);
  });

  router.post('/hosted/agreements/:token', async (ctx) => {
    const link = await found(ctx);
    if (!link) return;
    const session = await sessionOf(ctx, link);
    if (!session) return noSession(ctx, link);
    const agreement = await withAgreementTerm(signing, link.loan, link.agreement);
    const show = (
      status: number,
      kind: 'ok' | 'error',
      text: string,
      shown: Agreement = agreement,
    ) =>
      html(
        ctx,
        status,
        termsPage(
          { ...shown, termSha256: agreement.termSha256 },
          linkOf(ctx),
          acceptanceOpen({ ...link, agreement: shown }, signing.clock()),
          { kind, text },
        ),
      );
    if (!acceptanceOpen(link, signing.clock()))
      return link.agreement.acceptedAt
        ? show(409, 'error', 'Este acordo já foi aceito; nada mudou.')
        : ended(ctx, link);
    if (field(ctx, 'agree') !== 'yes')
      return show(422, 'error', 'Confirme que leu o termo do acordo e concorda.');
    const accepted = await acceptOnPage(
      signing,
      { ...link, agreement },
      session,
      field(ctx, 'term_sha256'),
      evidenceOf(ctx),
    );
    switch (accepted.kind) {
      case 'term_changed':
        return show(409, 'error', 'O termo mudou desde que a página foi aberta: leia-o de novo.');
      case 'not_open':
        return accepted.agreement.acceptedAt
          ? show(409, 'error', 'Este acordo já foi aceito; nada mudou.', accepted.agreement)
          : ended(ctx, { ...link, agreement: accepted.agreement });
      case 'accepted':
        return show(200, 'ok', 'Acordo aceito. Obrigado!', accepted.agreement);
    }
  });
}
