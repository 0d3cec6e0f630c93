import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { Payload } from '@temporalio/common';
import type { PayloadEncryptionCodec } from '../../../temporal/payload-codec.js';
import { ProblemError, problems, type FieldError } from '../../../errors.js';
import type { AppState } from '../../context.js';
import { formOrJsonBody } from '../../middleware/form-or-json-body.js';
import { jsonBody } from '../../middleware/json-body.js';
import { hostedPageHeaders } from '../../middleware/security-headers.js';
import { toFieldErrors } from '../../validate.js';
import { SESSION_COOKIE, SESSION_SECONDS, type CodecSessions } from './session.js';

type Ctx = Parameters<Middleware<AppState>>[0];

/**
 * Temporal's Remote Codec protocol for the Temporal UI (contract §15): `POST …/decode` and
 * `…/encode` take `{"payloads": [{"metadata": {k: base64}, "data": base64}]}` and answer the same
 * shape, run through the service's payload codec. Only staff get plain payloads: an ops bearer
 * token (the ops guard itself), or the session the sign-in page at `/ops/v1/temporal-codec` sets
 * for the UI's browser fetches, accepted only from the UI's origin (TEMPORAL_UI_ORIGIN). CORS
 * answers that origin alone, with credentials; its preflight needs no authentication.
 */
export const CODEC_PATH = '/ops/v1/temporal-codec';

const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'expected base64');
const payloadsBody = z.strictObject({
  payloads: z
    .array(
      z.object({
        metadata: z.record(z.string(), base64).nullish(),
        data: base64.nullish(),
      }),
    )
    .max(10_000),
});
type JsonPayload = z.infer<typeof payloadsBody>['payloads'][number];

const fromJson = ({ metadata, data }: JsonPayload): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
  ),
  data: Buffer.from(data ?? '', 'base64'),
});
const toJson = ({ metadata, data }: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(metadata ?? {}).map(([key, value]) => [
      key,
      Buffer.from(value).toString('base64'),
    ]),
  ),
  data: Buffer.from(data ?? []).toString('base64'),
});

export interface TemporalCodecDeps {
  codec: PayloadEncryptionCodec;
  sessions: CodecSessions;
  /** The Temporal UI's origin (TEMPORAL_UI_ORIGIN): the only one CORS answers. */
  uiOrigin: string;
  /** The ops API's guard (`guards.ops`): bearer tokens of operators and OPS_TOKEN. */
  opsGuard: Middleware<AppState>[];
  /** Whether a session's operator may still act (not deactivated since it signed in). */
  operatorActive: (operatorId: string) => Promise<boolean>;
  https: boolean;
}

/** Runs the guards in order, then `next`: the ops guard exactly as the ApiRouter runs it. */
const runGuards = (guards: Middleware<AppState>[], ctx: Ctx, next: () => Promise<void>) =>
  guards.reduceRight<() => Promise<unknown>>(
    (following, guard) => () => guard(ctx, following) as Promise<unknown>,
    next,
  )();

export function temporalCodecRoutes(deps: TemporalCodecDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: CODEC_PATH });
  const corsHeaders = {
    'Access-Control-Allow-Origin': deps.uiOrigin,
    'Access-Control-Allow-Credentials': 'true',
  };
  const fromUi = (ctx: Ctx) => ctx.get('Origin') === deps.uiOrigin;

  const cors: Middleware<AppState> = async (ctx, next) => {
    ctx.vary('Origin');
    // Set before the rest runs, so a 401 or 422 is readable by the UI too.
    if (fromUi(ctx)) ctx.set(corsHeaders);
    await next();
  };

  const preflight: Middleware<AppState> = (ctx) => {
    ctx.vary('Origin');
    ctx.status = 204;
    if (!fromUi(ctx)) return;
    ctx.set({
      ...corsHeaders,
      'Access-Control-Allow-Methods': 'POST',
      'Access-Control-Allow-Headers': 'Content-Type, X-Namespace',
      'Access-Control-Max-Age': '600',
    });
  };

  /** The UI's session (from its origin only), or else the ops guard's bearer token. */
  const staffOnly: Middleware<AppState> = async (ctx, next) => {
    const session = fromUi(ctx) ? deps.sessions.verify(ctx.cookies.get(SESSION_COOKIE)) : undefined;
    if (session && (await deps.operatorActive(session.operatorId))) {
      ctx.state.operator = { actor: { type: 'operator', id: session.operatorId }, roles: [] };
      await next();
      return;
    }
    await runGuards(deps.opsGuard, ctx, next);
  };

  const codecRoute =
    (direction: 'decode' | 'encode'): Middleware<AppState> =>
    async (ctx) => {
      const parsed = payloadsBody.safeParse((ctx.request as { body?: unknown }).body ?? {});
      if (!parsed.success)
        throw problems.validation(
          parsed.error.issues.flatMap((issue) => toFieldErrors('body', issue)),
        );
      const out: Payload[] = [];
      const errors: FieldError[] = [];
      for (const [index, payload] of parsed.data.payloads.entries()) {
        try {
          // A plain payload is shown as it is (a patch marker, a history from before the codec):
          // nothing acts on what this answers.
          if (direction === 'decode')
            out.push((await deps.codec.open(fromJson(payload), 'accept')).payload);
          else out.push(...(await deps.codec.encode([fromJson(payload)])));
        } catch (error) {
          errors.push({
            path: `payloads.${index}`,
            code: 'codec_failed',
            message: error instanceof Error ? error.message : String(error),
          });
        }
      }
      if (errors.length > 0) throw problems.validation(errors);
      // Who saw plain payloads, and how many: personal data leaves encryption here.
      ctx.state.log.info(
        {
          operator: ctx.state.operator?.actor.id,
          namespace: ctx.get('X-Namespace') || undefined,
          payloads: out.length,
        },
        `temporal payloads ${direction}d`,
      );
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { payloads: out.map(toJson) };
    };

  for (const direction of ['decode', 'encode'] as const) {
    router.options(`/${direction}`, preflight);
    router.post(`/${direction}`, cors, staffOnly, jsonBody, codecRoute(direction));
  }

  // The sign-in page: the ops token once, a session cookie back.
  const page = hostedPageHeaders(deps.https);
  const cookie = (value: string, maxAge: number) =>
    [
      `${SESSION_COOKIE}=${value}`,
      `Path=${CODEC_PATH}`,
      `Max-Age=${maxAge}`,
      'HttpOnly',
      'SameSite=Strict',
      ...(deps.https ? ['Secure'] : []),
    ].join('; ');

  router.get('/', page, async (ctx) => {
    const session = deps.sessions.verify(ctx.cookies.get(SESSION_COOKIE));
    const active = session && (await deps.operatorActive(session.operatorId));
    html(ctx, 200, active ? signedInPage(session, deps.uiOrigin) : signInPage());
  });
  router.post('/', page, formOrJsonBody, async (ctx) => {
    const body = (ctx.request as { body?: unknown }).body;
    const token =
      body && typeof body === 'object' && 'token' in body && typeof body.token === 'string'
        ? body.token.trim()
        : '';
    // The token goes through the ops guard as if it came as a bearer token, and no further.
    ctx.request.headers.authorization = `Bearer ${token}`;
    try {
      await runGuards(deps.opsGuard, ctx, async () => {});
    } catch (error) {
      if (error instanceof ProblemError && error.status === 401) {
        html(ctx, 401, signInPage('That token was not accepted.'));
        return;
      }
      throw error;
    } finally {
      delete ctx.request.headers.authorization;
    }
    const operatorId = ctx.state.operator?.actor.id;
    if (!operatorId) throw new Error('the ops guard passed without an operator');
    const { value, session } = deps.sessions.issue(operatorId);
    ctx.set('Set-Cookie', cookie(value, SESSION_SECONDS));
    ctx.state.log.info({ operator: operatorId }, 'signed in for decoded Temporal payloads');
    html(ctx, 200, signedInPage(session, deps.uiOrigin));
  });
  router.post('/sign-out', page, (ctx) => {
    ctx.set('Set-Cookie', cookie('', 0));
    html(ctx, 200, signInPage('Signed out.'));
  });
  return router;
}

function html(ctx: Ctx, status: number, body: string) {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const layout = (body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Decoded Temporal payloads — staff sign-in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body { font: 16px/1.5 system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem; color: #1a1a1a; }
input, button { font: inherit; padding: .4rem .6rem; } input { width: 100%; box-sizing: border-box; } .note { color: #555; font-size: .9rem; }</style>
</head><body>${body}</body></html>`;

const signInPage = (message?: string) =>
  layout(`<h1>Decoded Temporal payloads</h1>
${message ? `<p><strong>${escape(message)}</strong></p>` : ''}
<p>Workflow payloads are encrypted. Sign in with your ops token so the Temporal UI, in this
browser, shows them decoded for the next hour.</p>
<form method="post" action="${CODEC_PATH}">
<p><label>Ops token<br><input type="password" name="token" autocomplete="off" required autofocus></label></p>
<p><button type="submit">Sign in</button></p></form>
<p class="note">The token is checked once and never stored: the browser keeps a signed session,
sent only to this endpoint.</p>`);

const signedInPage = (session: { operatorId: string; expiresAt: Date }, uiOrigin: string) =>
  layout(`<h1>Decoded Temporal payloads</h1>
<p>Signed in as <code>${escape(session.operatorId)}</code> until
${escape(session.expiresAt.toISOString())}. The Temporal UI at
<a href="${escape(uiOrigin)}">${escape(uiOrigin)}</a> now shows payloads decoded in this browser.</p>
<form method="post" action="${CODEC_PATH}/sign-out"><button type="submit">Sign out</button></form>`);
