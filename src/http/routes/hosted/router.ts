import Router from '@koa/router';
import {
  completeBiometrics,
  viewBiometricsSession,
  type SessionView,
} from '../../../commands/biometrics.js';
import type { CustomerDeps } from '../../../commands/customer-deps.js';
import type { AppState } from '../../context.js';

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
export function hostedRoutes(deps: CustomerDeps): Router<AppState> {
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

  return router;
}
