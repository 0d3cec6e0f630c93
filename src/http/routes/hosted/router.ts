import Router from '@koa/router';
import { HttpMethodEnum, koaBody } from 'koa-body';
import {
  completeBiometrics,
  viewBiometricsSession,
  type SessionView,
} from '../../../commands/biometrics.js';
import type { CustomerDeps } from '../../../commands/customer-deps.js';
import { signLoan, type LoanDeps } from '../../../commands/loans.js';
import { findLoanBySigningToken } from '../../../db/queries/loans.js';
import { normalizeCpf } from '../../../domain/customers/tax-ids.js';
import { hashSigningToken } from '../../../domain/loans/signing-token.js';
import { ProblemError } from '../../../errors.js';
import type { AppContext, AppState } from '../../context.js';
import { sendContract } from '../loans/router.js';
import { page as signingLayout, signingPage } from './signing-page.js';

const messages: Record<Exclude<SessionView, 'open'>, { title: string; text: string }> = {
  completed: {
    title: 'Capture received',
    text: 'Thank you. Your biometric capture was received; you can close this page.',
  },
  expired: {
    title: 'This link has expired',
    text: 'Nothing was recorded. Ask for a new link to try again.',
  },
  superseded: {
    title: 'This link was replaced',
    text: 'A newer link was issued; nothing was recorded here. Use the newest link.',
  },
  unknown: { title: 'Link not found', text: 'This link is not valid. Ask for a new one.' },
};

const page = (title: string, body: string) => `<!doctype html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 17px/1.5 system-ui, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem; color: #1a1a1a; }
  button { font: inherit; padding: .7rem 1.4rem; border: 0; border-radius: .4rem; background: #0b6e4f; color: #fff; cursor: pointer; }
</style></head><body>${body}</body></html>`;

/**
 * The page a customer opens from `session_url` to complete the biometric capture. It needs no
 * token but the one in its path, loads nothing from elsewhere, and works without JavaScript.
 * (The capture itself — a liveness check by a biometrics vendor — is outside this service; the
 * page records that the customer completed it.)
 */
export function hostedRoutes(deps: CustomerDeps, loanDeps: LoanDeps): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/hosted/biometrics/:token', async (ctx) => {
    const view = await viewBiometricsSession(deps, ctx.params.token ?? '');
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'no-referrer');
    if (view !== 'open') {
      ctx.status = view === 'unknown' ? 404 : 410;
      ctx.body = page(
        messages[view].title,
        `<h1>${messages[view].title}</h1><p>${messages[view].text}</p>`,
      );
      return;
    }
    ctx.body = page(
      'Biometric capture',
      `<h1>Biometric capture</h1>
<p>Look at the camera with your face uncovered and good light, then confirm.</p>
<form method="post"><button type="submit">Complete capture</button></form>`,
    );
  });

  router.post('/hosted/biometrics/:token', async (ctx) => {
    const shown = await completeBiometrics(deps, ctx.params.token ?? '');
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.status = shown === 'completed' ? 200 : shown === 'unknown' ? 404 : 410;
    ctx.body = page(
      messages[shown].title,
      `<h1>${messages[shown].title}</h1><p>${messages[shown].text}</p>`,
    );
  });

  signingRoutes(router, loanDeps);
  return router;
}

const parseForm = koaBody({
  json: false,
  urlencoded: true,
  formLimit: '8kb',
  text: false,
  multipart: false,
  parsedMethods: [HttpMethodEnum.POST],
});

/**
 * The contract's signing page (`signing_url`): one per loan, for every signer; each confirms with
 * their cpf. The token in the path is the only key. Every answer is a page, never JSON.
 */
function signingRoutes(router: Router<AppState>, deps: LoanDeps): void {
  const html = (ctx: AppContext, status: number, body: string) => {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.body = body;
  };
  const notFound = (ctx: AppContext) =>
    html(
      ctx,
      404,
      signingLayout(
        'Link não encontrado',
        '<h1>Link não encontrado</h1><p>Este link de assinatura não é válido.</p>',
      ),
    );
  const loanOf = (token: string) => findLoanBySigningToken(deps.db, hashSigningToken(token));

  router.get('/hosted/signing/:token', async (ctx) => {
    const token = ctx.params.token ?? '';
    const loan = await loanOf(token);
    if (!loan) return notFound(ctx);
    html(ctx, 200, signingPage(loan, token));
  });

  router.get('/hosted/signing/:token/contract', async (ctx) => {
    const loan = await loanOf(ctx.params.token ?? '');
    if (!loan) return notFound(ctx);
    await sendContract(ctx, deps, loan);
  });

  router.post('/hosted/signing/:token', parseForm, async (ctx) => {
    const token = ctx.params.token ?? '';
    const loan = await loanOf(token);
    if (!loan) return notFound(ctx);
    const form = (ctx.request.body ?? {}) as Record<string, unknown>;
    const cpf = typeof form.cpf === 'string' ? normalizeCpf(form.cpf.trim()) : undefined;
    const refuse = (status: number, text: string) =>
      html(ctx, status, signingPage(loan, token, { kind: 'error', text }));
    if (!cpf) return refuse(422, 'Informe um CPF válido.');
    if (form.agree !== 'yes') return refuse(422, 'Confirme que leu o contrato e concorda.');
    try {
      const signed = await signLoan(deps, loan, cpf, {
        ipAddress: ctx.ip || null,
        userAgent: ctx.get('User-Agent') || null,
      });
      html(
        ctx,
        200,
        signingPage(signed, token, { kind: 'ok', text: 'Assinatura registrada. Obrigado!' }),
      );
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      if (error.code === 'validation_error')
        return refuse(422, 'Este CPF não é de um signatário deste contrato.');
      if (error.code === 'invalid_state')
        return refuse(409, 'Este contrato não recebe mais assinaturas.');
      throw error;
    }
  });
}
