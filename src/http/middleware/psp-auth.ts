import type { Context, Middleware } from 'koa';
import getRawBody from 'raw-body';
import { pspMtlsCheck, type PspAuthentication } from '../../domain/pix/psp-mtls.js';
import { verifyPspSignature } from '../../domain/pix/psp-signature.js';
import { problems } from '../../errors.js';
import type { AppState } from '../context.js';
import { JSON_BODY_LIMIT } from './json-body.js';

type StateContext = Context & { state: AppState };

/** The request's body as received, read once (limit 1 MiB: a 413 past it) and kept on the state. */
async function rawBodyOf(ctx: StateContext): Promise<Buffer> {
  try {
    ctx.state.rawBody ??= await getRawBody(ctx.req, {
      limit: JSON_BODY_LIMIT,
      length: ctx.get('Content-Length') || undefined,
    });
  } catch (error) {
    // Too large stays a 413; a body cut short or longer than its Content-Length is the client's 400.
    const status = (error as { status?: unknown }).status;
    if (status === 400 && error instanceof Error) throw problems.invalidJson(error.message);
    throw error;
  }
  return ctx.state.rawBody;
}

const reasons = {
  missing: 'Sign the body: Pix-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">.',
  malformed: 'The Pix-Signature header is not t=<unix seconds>,v1=<64 hex digits>.',
  expired: 'The Pix-Signature timestamp is more than 5 minutes from now; sign at sending.',
  mismatch: 'The Pix-Signature does not sign this body with the PSP secret.',
  // Mutual TLS: said the same whatever failed, so a caller learns nothing of the proxy's setup.
  untrusted_peer: 'The PSP authenticates with its client certificate, through the proxy in front.',
  unverified: 'The PSP authenticates with its client certificate, through the proxy in front.',
  wrong_subject: 'The PSP authenticates with its client certificate, through the proxy in front.',
} as const;

/**
 * The PSP's notifications (contract §14), authenticated before the body is parsed, so an
 * unauthenticated request touches nothing: the HMAC of the raw body under the PSP's secret, or
 * (PSP_WEBHOOK_AUTH=mtls) the proxy's verified-client headers, on a request from the proxy's own
 * address, naming the PSP's certificate — checked before the body is even read.
 */
export function pspAuth(auth: PspAuthentication, clock: () => Date): Middleware<AppState> {
  const checkMtls = 'mtls' in auth ? pspMtlsCheck(auth.mtls) : undefined;
  return async (ctx, next) => {
    if (checkMtls) {
      const refused = checkMtls({
        peer: ctx.req.socket.remoteAddress,
        header: (name) => ctx.get(name),
      });
      if (refused) {
        ctx.state.log.warn(
          { refused, peer: ctx.req.socket.remoteAddress },
          'PSP notification refused: no verified client certificate',
        );
        throw problems.unauthorized(reasons[refused]);
      }
      await rawBodyOf(ctx);
    } else if ('secret' in auth) {
      const body = await rawBodyOf(ctx);
      const check = verifyPspSignature(
        ctx.get('Pix-Signature'),
        auth.secret,
        body,
        clock().getTime(),
      );
      if (!check.ok) throw problems.unauthorized(reasons[check.reason]);
    }
    await next();
  };
}

/**
 * The JSON body of a route whose guard reads the raw bytes (the PSP's signature covers them): parsed
 * from those bytes; another media type is a 415, bytes that are not JSON a 400.
 */
export const signedJsonBody: Middleware<AppState> = async (ctx, next) => {
  const body = await rawBodyOf(ctx);
  if (body.length === 0) {
    ctx.request.body = undefined;
  } else {
    if (!ctx.is('application/json', 'application/*+json'))
      throw problems.unsupportedMediaType(['application/json']);
    try {
      ctx.request.body = JSON.parse(body.toString('utf8')) as typeof ctx.request.body;
    } catch (error) {
      throw problems.invalidJson(error instanceof Error ? error.message : 'unparseable body');
    }
  }
  await next();
};
