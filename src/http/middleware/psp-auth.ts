import type { Context, Middleware } from 'koa';
import getRawBody from 'raw-body';
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
} as const;

/**
 * The PSP's notifications (contract §14): the HMAC of the raw body, checked before the body is
 * parsed or anything read, so an unauthenticated request touches nothing. With `secret` null,
 * mutual TLS at the proxy in front authenticates the PSP (PSP_WEBHOOK_AUTH=mtls) and this only
 * reads the body.
 */
export function pspAuth(secret: string | null, clock: () => Date): Middleware<AppState> {
  return async (ctx, next) => {
    const body = await rawBodyOf(ctx);
    if (secret !== null) {
      const check = verifyPspSignature(ctx.get('Pix-Signature'), secret, body, clock().getTime());
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
