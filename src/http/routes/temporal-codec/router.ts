import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { Payload } from '@temporalio/common';
import { hasRole, type Operator } from '../../../domain/operators.js';
import type { PayloadEncryptionCodec } from '../../../temporal/payload-codec.js';
import { requireRoles } from '../../middleware/ops-auth.js';
import { ProblemError, problems, type FieldError } from '../../../errors.js';
import type { AppState } from '../../context.js';
import { formOrJsonBody } from '../../middleware/form-or-json-body.js';
import { jsonBody } from '../../middleware/json-body.js';
import { hostedPageHeaders } from '../../middleware/security-headers.js';
import { toFieldErrors } from '../../validate.js';
import {
  SESSION_COOKIE,
  SESSION_SECONDS,
  type CodecSession,
  type CodecSessions,
} from './session.js';

type Ctx = Parameters<Middleware<AppState>>[0];

/**
 * Temporal's Remote Codec protocol for the Temporal UI (contract §15, issue 37): `POST …/decode`
 * takes `{"payloads": [{"metadata": {k: base64}, "data": base64}]}` and answers the same shape,
 * opened by the service's payload codec. Decode only: nobody but the worker (in-process) seals a
 * payload, so there is no `/encode` to forge one with. Only operators with the role
 * `workflow_viewer` get plain payloads: by an ops bearer token (the ops guard itself), or by the
 * session the sign-in page at `/ops/v1/temporal-codec` sets for the UI's browser fetches,
 * accepted only from the UI's origin (TEMPORAL_UI_ORIGIN) and only while the token it was made
 * from is live. Every decode is an ops command in the audit (`decodeTemporalPayloads`): who,
 * which namespace and workflow (`X-Workflow-Id`, when the caller names it), how many payloads and
 * whose (the customers whose keys opened them). CORS answers the UI's origin alone, with
 * credentials; its preflight needs no authentication.
 */
export const CODEC_PATH = '/ops/v1/temporal-codec';
export const CODEC_ROLES = ['workflow_viewer'] as const;

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
/** What a header may name in the audit: an id, a namespace (nothing else is kept). */
const auditable = (value: string) => (/^[\w./:-]{1,300}$/.test(value) ? value : null);

export interface TemporalCodecDeps {
  codec: PayloadEncryptionCodec;
  sessions: CodecSessions;
  /** The Temporal UI's origin (TEMPORAL_UI_ORIGIN): the only one CORS answers. */
  uiOrigin: string;
  /** The ops API's guard (`guards.ops`): bearer tokens of operators and OPS_TOKEN. */
  opsGuard: Middleware<AppState>[];
  /** Audits an ops command (the ops API's `opsAudit`). */
  audit: (operationId: string) => Middleware<AppState>;
  /** The live token behind a bearer token the ops guard took (its id), to bind a session to. */
  tokenIdOf: (token: string, operator: Operator) => Promise<string | undefined>;
  /** The operator a session acts as, while its token is live and its operator active. */
  operatorOfSession: (session: CodecSession) => Promise<Operator | undefined>;
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
      'Access-Control-Allow-Headers': 'Content-Type, X-Namespace, X-Workflow-Id',
      'Access-Control-Max-Age': '600',
    });
  };

  /** The session's operator, while it lasts, its token does and it has the role; else none. */
  const sessionOperator = async (ctx: Ctx): Promise<Operator | undefined> => {
    const session = deps.sessions.verify(ctx.cookies.get(SESSION_COOKIE));
    const operator = session && (await deps.operatorOfSession(session));
    return operator && hasRole(operator, CODEC_ROLES) ? operator : undefined;
  };

  /** The UI's session (from its origin only), or else the ops guard's bearer token. */
  const staffOnly: Middleware<AppState> = async (ctx, next) => {
    const operator = fromUi(ctx) ? await sessionOperator(ctx) : undefined;
    if (operator) {
      ctx.state.operator = operator;
      await next();
      return;
    }
    await runGuards(deps.opsGuard, ctx, next);
  };

  const decode: Middleware<AppState> = async (ctx) => {
    const parsed = payloadsBody.safeParse((ctx.request as { body?: unknown }).body ?? {});
    if (!parsed.success)
      throw problems.validation(
        parsed.error.issues.flatMap((issue) => toFieldErrors('body', issue)),
      );
    const out: Payload[] = [];
    const errors: FieldError[] = [];
    const customers = new Set<string>();
    let plain = 0;
    for (const [index, payload] of parsed.data.payloads.entries()) {
      try {
        // A plain payload is shown as it is (a patch marker, a history from before the codec):
        // nothing acts on what this answers, and nothing secret is in it.
        const opened = await deps.codec.open(fromJson(payload), 'accept');
        if (opened.sealedBy === 'plain') plain++;
        else if (opened.sealedBy !== 'master') customers.add(opened.sealedBy.customerId);
        out.push(opened.payload);
      } catch (error) {
        errors.push({
          path: `payloads.${index}`,
          code: 'codec_failed',
          message: error instanceof Error ? error.message : String(error),
        });
      }
    }
    // Who saw plain payloads, of which workflow, how many, and whose: personal data leaves
    // encryption here (the audit row is completed with it, refusals included).
    ctx.state.auditDetail = {
      namespace: auditable(ctx.get('X-Namespace')),
      workflow_id: auditable(ctx.get('X-Workflow-Id')),
      payloads: parsed.data.payloads.length,
      decoded: out.length,
      plain,
      customer_ids: [...customers].sort(),
    };
    if (errors.length > 0) throw problems.validation(errors);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { payloads: out.map(toJson) };
  };

  router.options('/decode', preflight);
  router.post(
    '/decode',
    cors,
    staffOnly,
    deps.audit('decodeTemporalPayloads'),
    requireRoles(CODEC_ROLES),
    jsonBody,
    decode,
  );

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
    const live = session && (await sessionOperator(ctx));
    html(ctx, 200, session && live ? signedInPage(session, deps.uiOrigin) : signInPage());
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
    const operator = ctx.state.operator;
    if (!operator) throw new Error('the ops guard passed without an operator');
    if (!hasRole(operator, CODEC_ROLES)) {
      ctx.state.log.info({ operator: operator.actor.id }, 'codec sign-in refused: no role');
      html(
        ctx,
        403,
        signInPage(
          `Decoded payloads need the role ${CODEC_ROLES.join(', ')}, which this token has not.`,
        ),
      );
      return;
    }
    const tokenId = await deps.tokenIdOf(token, operator);
    if (!tokenId) throw new Error('the ops guard passed a token that is not live');
    const { value, session } = deps.sessions.issue(operator.actor.id, tokenId);
    ctx.set('Set-Cookie', cookie(value, SESSION_SECONDS));
    ctx.state.log.info({ operator: operator.actor.id }, 'signed in for decoded Temporal payloads');
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
<p>Workflow payloads are encrypted. Sign in with your ops token (an operator with the role
workflow_viewer) so the Temporal UI, in this browser, shows them decoded for the next hour. Every
decode is audited.</p>
<form method="post" action="${CODEC_PATH}">
<p><label>Ops token<br><input type="password" name="token" autocomplete="off" required autofocus></label></p>
<p><button type="submit">Sign in</button></p></form>
<p class="note">The token is never stored: the browser keeps a signed session, sent only to this
endpoint, which ends when the token is rotated or revoked.</p>`);

const signedInPage = (session: CodecSession, uiOrigin: string) =>
  layout(`<h1>Decoded Temporal payloads</h1>
<p>Signed in as <code>${escape(session.operatorId)}</code> until
${escape(session.expiresAt.toISOString())}. The Temporal UI at
<a href="${escape(uiOrigin)}">${escape(uiOrigin)}</a> now shows payloads decoded in this browser.</p>
<form method="post" action="${CODEC_PATH}/sign-out"><button type="submit">Sign out</button></form>`);
