import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import type { KeyRing } from '../../../domain/key-ring.js';
import type { AppState } from '../../context.js';
import { messagePage } from './layout.js';
import { field, html, parseForm } from './respond.js';

/**
 * CSRF tokens on the hosted pages' forms (issue 37, finding 10), not SameSite alone: a browser gets
 * a random `hosted_form` cookie (HttpOnly, SameSite=Strict, for `/hosted/` only) and every form it
 * is shown carries `csrf`, an HMAC of that cookie and the link under a key derived from
 * SIGNING_LINK_KEYS. A POST is taken only when its `csrf` is the one of the cookie it came with and
 * of that link: a page of another site (or a browser that never opened this link's page) cannot
 * make one, and a token copied from another browser's page is not this cookie's.
 */
const COOKIE = 'hosted_form';
const COOKIE_VALUE = /^[\w-]{43}$/;
const PURPOSE = 'hosted-form-csrf:';

/** The link a hosted path belongs to, decoded: `/hosted/{kind}/{token}` (one bucket, one token). */
export function hostedLinkOf(path: string): string {
  const match = /^\/hosted\/([^/]+)\/([^/]+)/.exec(path);
  if (!match) return '';
  let token = match[2]!;
  try {
    token = decodeURIComponent(token);
  } catch {
    // Not valid percent-encoding: the raw text is its own (unknown) link.
  }
  return `${match[1]}/${token}`;
}

export function hostedForms(keys: KeyRing, https: boolean): Middleware<AppState> {
  const tokenOf = (secret: Buffer, cookie: string, link: string) =>
    createHmac('sha256', secret).update(`${PURPOSE}${cookie}:${link}`).digest('base64url');
  const cookieHeader = (value: string) =>
    [
      `${COOKIE}=${value}`,
      'Path=/hosted/',
      'HttpOnly',
      'SameSite=Strict',
      ...(https ? ['Secure'] : []),
    ].join('; ');

  return async (ctx, next) => {
    const link = hostedLinkOf(ctx.path);
    const sent = ctx.cookies.get(COOKIE);
    const cookie = sent && COOKIE_VALUE.test(sent) ? sent : undefined;
    if (ctx.method === 'POST') {
      await parseForm(ctx, async () => {});
      const presented = Buffer.from(field(ctx, 'csrf'));
      const valid =
        cookie !== undefined &&
        keys.all.some((key) => {
          const expected = Buffer.from(tokenOf(key.secret, cookie, link));
          return presented.length === expected.length && timingSafeEqual(presented, expected);
        });
      if (!valid) {
        ctx.state.log.info(
          { link: link.split('/')[0] },
          'hosted form refused: no valid CSRF token',
        );
        return html(
          ctx,
          403,
          messagePage(
            'Formulário expirado',
            'Por segurança, abra o link de novo e repita o que estava fazendo. Nada foi registrado.',
          ),
        );
      }
    }
    const value = cookie ?? randomBytes(32).toString('base64url');
    if (!cookie) ctx.append('Set-Cookie', cookieHeader(value));
    ctx.state.csrf = tokenOf(keys.current.secret, value, link);
    await next();
  };
}
