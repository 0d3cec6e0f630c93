import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { CustomerDeps } from '../../../commands/customer-deps.js';
import type { SigningDeps } from '../../../commands/signing.js';
import type { VerificationDeps } from '../../../commands/verification.js';
import type { TokenBuckets } from '../../../domain/token-bucket.js';
import type { AppState } from '../../context.js';
import { hostedPageHeaders } from '../../middleware/security-headers.js';
import { agreementAcceptanceRoutes } from './agreement-acceptance.js';
import { biometricsRoutes } from './biometrics.js';
import { messagePage } from './layout.js';
import { html } from './respond.js';
import { hostedForms, hostedLinkOf } from './forms.js';
import { reminderOptOutRoutes } from './reminders.js';
import { signingRoutes } from './signing.js';

export interface HostedDeps {
  customers: CustomerDeps & VerificationDeps;
  signing: SigningDeps;
  /** Whether pages are served over https (PUBLIC_BASE_URL): cookies then get `Secure`. */
  https: boolean;
  /**
   * Requests to hosted pages (contract §15: throttled, 429 page), per address and per (link,
   * address): one address cannot spend another's allowance of a link.
   */
  throttle: { perAddress: TokenBuckets; perLinkAndAddress: TokenBuckets };
}

/**
 * Each address spends from its own bucket on every request to a hosted page, and from the bucket
 * of the link it asks for at that address, so neither guessing links nor hammering one (each POST
 * may be a workflow Update or an e-mail) goes far — and hammering a link from elsewhere locks out
 * nobody else. The link is the decoded token: `%6C` is the `l` it encodes, one bucket. Past a
 * limit, a 429 page with Retry-After.
 */
function throttle(buckets: HostedDeps['throttle']): Middleware<AppState> {
  return async (ctx, next) => {
    const link = hostedLinkOf(ctx.path);
    const refused = [
      buckets.perAddress.take(ctx.ip),
      buckets.perLinkAndAddress.take(`${link} ${ctx.ip}`),
    ].find((decision) => !decision.allowed);
    if (refused) {
      ctx.set('Retry-After', String(refused.retryAfterSeconds));
      return html(
        ctx,
        429,
        messagePage(
          'Muitas tentativas',
          `Aguarde ${refused.retryAfterSeconds} segundos e tente de novo.`,
        ),
      );
    }
    await next();
  };
}

/**
 * The pages this service hosts for people rather than programs: the contract's signing page, the
 * biometric capture page, the reminders' opt-out and a payment agreement's acceptance page. Each needs no token but the one in its link, and proves the person
 * by a code sent to their e-mail on record before anything counts; every form carries a CSRF token.
 */
export function hostedRoutes(deps: HostedDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.use(
    hostedPageHeaders(deps.https),
    throttle(deps.throttle),
    hostedForms(deps.signing.signingLinkKeys, deps.https),
  );
  biometricsRoutes(router, deps);
  signingRoutes(router, deps);
  reminderOptOutRoutes(router, deps);
  agreementAcceptanceRoutes(router, deps);
  return router;
}
