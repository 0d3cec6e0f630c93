import type Router from '@koa/router';
import {
  completeBiometrics,
  requestBiometricsCode,
  viewBiometricsSession,
  type CompletionOutcome,
} from '../../../commands/biometrics.js';
import { CodeNotSentError } from '../../../commands/verification.js';
import { isCodeShaped, normalizeCode } from '../../../domain/verification-codes.js';
import type { AppContext, AppState } from '../../context.js';
import { escapeHtml, messagePage, notice, page, postForm, type HostedLink } from './layout.js';
import { evidenceOf, field, html, linkOf } from './respond.js';
import type { HostedDeps } from './router.js';
import { waitText } from './signing.js';

const closed: Record<CompletionOutcome, { status: number; title: string; text: string }> = {
  completed: {
    status: 200,
    title: 'Captura recebida',
    text: 'Obrigado. Sua captura biométrica foi recebida; você pode fechar esta página.',
  },
  expired: {
    status: 410,
    title: 'Este link expirou',
    text: 'Nada foi registrado. Peça um novo link para tentar de novo.',
  },
  superseded: {
    status: 410,
    title: 'Este link foi substituído',
    text: 'Um link mais novo foi emitido; nada foi registrado aqui. Use o link mais recente.',
  },
  unknown: { status: 404, title: 'Link não encontrado', text: 'Este link não é válido.' },
};

const path = (token: string) => `/hosted/biometrics/${encodeURIComponent(token)}`;

const startPage = (link: HostedLink, message?: string) =>
  page(
    'Captura biométrica',
    `<h1>Captura biométrica</h1>
${message ? notice('error', message) : ''}
<p>Olhe para a câmera com o rosto descoberto e boa luz. Para concluir, enviaremos um código de 6 dígitos para o seu e-mail cadastrado.</p>
${postForm(`${path(link.token)}/code`, link, '<button type="submit">Enviar código</button>')}`,
  );

const codeForm = (
  link: HostedLink,
  codeId: string,
  channel: string | undefined,
  message?: string,
) =>
  page(
    'Concluir a captura',
    `<h1>Concluir a captura</h1>
${message ? notice('error', message) : ''}
<p>Enviamos um código para <strong>${escapeHtml(channel?.replace(/^email:/, '') ?? 'o seu e-mail cadastrado')}</strong>. Ele vale por 10 minutos.</p>
${postForm(
  path(link.token),
  link,
  `<input type="hidden" name="code_id" value="${escapeHtml(codeId)}">
<label for="code">Código</label>
<input id="code" class="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="7" placeholder="000000">
<button type="submit">Concluir captura</button>`,
)}
<p class="muted"><a href="${path(link.token)}">Não recebeu? Pedir um novo código</a></p>`,
  );

const showClosed = (ctx: AppContext, view: CompletionOutcome, status = closed[view].status) =>
  html(ctx, status, messagePage(closed[view].title, closed[view].text));

/**
 * The page a customer opens from `session_url` to complete the biometric capture. The capture
 * itself (a liveness check by a biometrics vendor) is outside this service; the page records that
 * the customer completed it, once a code sent to their e-mail proves it is them. A POST without
 * the code records nothing.
 */
export function biometricsRoutes(router: Router<AppState>, deps: HostedDeps): void {
  router.get('/hosted/biometrics/:token', async (ctx) => {
    const token = ctx.params.token ?? '';
    const view = await viewBiometricsSession(deps.customers, token);
    if (view !== 'open') return showClosed(ctx, view, view === 'unknown' ? 404 : 410);
    html(ctx, 200, startPage(linkOf(ctx)));
  });

  router.post('/hosted/biometrics/:token/code', async (ctx) => {
    const token = ctx.params.token ?? '';
    try {
      const sent = await requestBiometricsCode(deps.customers, token, ctx.ip || null);
      if (sent.kind === 'closed') return showClosed(ctx, sent.view);
      if (sent.kind === 'too_many') {
        ctx.set('Retry-After', String(sent.retryAfterSeconds));
        return html(
          ctx,
          429,
          startPage(
            linkOf(ctx),
            `Você pediu muitos códigos. Tente de novo em ${waitText(sent.retryAfterSeconds)}.`,
          ),
        );
      }
      html(ctx, 200, codeForm(linkOf(ctx), sent.codeId, sent.channel));
    } catch (error) {
      if (!(error instanceof CodeNotSentError)) throw error;
      ctx.set('Retry-After', '30');
      html(
        ctx,
        503,
        startPage(linkOf(ctx), 'Não conseguimos enviar o código agora. Tente de novo.'),
      );
    }
  });

  router.post('/hosted/biometrics/:token', async (ctx) => {
    const token = ctx.params.token ?? '';
    const codeId = field(ctx, 'code_id');
    const code = normalizeCode(field(ctx, 'code'));
    if (!codeId || !code) {
      const view = await viewBiometricsSession(deps.customers, token);
      if (view !== 'open') return showClosed(ctx, view);
      return html(ctx, 422, startPage(linkOf(ctx), 'Para concluir, peça e digite o código.'));
    }
    if (!isCodeShaped(code))
      return html(ctx, 422, codeForm(linkOf(ctx), codeId, undefined, 'O código tem 6 dígitos.'));
    const outcome = await completeBiometrics(deps.customers, token, {
      codeId,
      code,
      evidence: evidenceOf(ctx),
    });
    if (outcome.kind === 'closed') return showClosed(ctx, outcome.view);
    if (outcome.kind === 'wrong') {
      const left = outcome.attemptsLeft;
      return html(
        ctx,
        422,
        left > 0
          ? codeForm(
              linkOf(ctx),
              codeId,
              outcome.code.channel,
              `Código incorreto. Restam ${left} tentativas.`,
            )
          : startPage(
              linkOf(ctx),
              'Código incorreto e sem tentativas restantes. Peça um novo código.',
            ),
      );
    }
    html(
      ctx,
      422,
      startPage(linkOf(ctx), 'Este código expirou ou já foi usado. Peça um novo código.'),
    );
  });
}
