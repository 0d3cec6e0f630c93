import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { OperatorRole } from '../domain/operators.js';
import { problems } from '../errors.js';
import type { AppContext, AppState } from './context.js';
import { formOrJsonBody } from './middleware/form-or-json-body.js';
import { jsonBody } from './middleware/json-body.js';
import { requireRoles } from './middleware/ops-auth.js';
import { multipartBody } from './middleware/multipart-body.js';
import { signedJsonBody } from './middleware/psp-auth.js';
import { notFoundCodeOf } from './ids.js';
import { validated } from './validate.js';
import type { RecordedExchange } from './examples/examples.js';

export type Security = 'partner' | 'ops' | 'psp' | 'none';

const bodyParsers = {
  json: jsonBody,
  'form-or-json': formOrJsonBody,
  multipart: multipartBody,
  'signed-json': signedJsonBody,
};

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** The body's media type(s) when it is not JSON (a PDF; a stored document's kinds). */
  contentType?: string | string[];
  /** Response headers worth documenting, e.g. `Location`. */
  headers?: Record<string, string>;
}

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Relative to the router's prefix, in OpenAPI form: `/auth/credentials/{client_id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  security: Security;
  /** Accepts `Idempotency-Key` (creating POSTs). */
  idempotent?: boolean;
  /** Ops only: the roles that may run it (any of them); any operator when absent. */
  roles?: readonly OperatorRole[];
  /** Ops only: a read audited like a command, whoever makes it (an export of borrowers' data). */
  auditReads?: boolean;
  /**
   * Path parameters, ids made by `pathId`: one of another shape is the resource's 404, answered
   * before the body is read (contract §1: a path parameter is never a 422).
   */
  params?: P;
  query?: Q;
  body?: B;
  /** `signed-json`: JSON read from the bytes the route's guard authenticated (the PSP's). */
  bodyType?: keyof typeof bodyParsers;
  /** What the OpenAPI document shows as the body, when it differs from what `body` validates. */
  bodyDocumentation?: z.ZodType;
  /** The multipart `encoding` of the document: the media types a part may carry. */
  bodyEncoding?: Record<string, { contentType: string }>;
  responses: Record<number, ResponseSpec>;
  /** Problem codes this operation can answer besides the ones every operation can. */
  errors?: number[];
  /** Problem schemas of statuses whose problems carry more members than the standard ones. */
  problems?: Record<number, z.ZodType>;
}

export interface DocumentedOperation {
  spec: RouteSpec<z.ZodType, z.ZodType, z.ZodType>;
  /** Full OpenAPI path, prefix included. */
  path: string;
}

type Input<P, Q, B> = {
  params: P extends z.ZodType ? z.output<P> : undefined;
  query: Q extends z.ZodType ? z.output<Q> : undefined;
  body: B extends z.ZodType ? z.output<B> : undefined;
};

/**
 * Mounts operations and records them for the OpenAPI document, so the schemas that validate a
 * request are the ones that document it. Each operation's chain: guards for its security (auth,
 * rate limit), idempotency when it creates, body parsing, validation, then the handler.
 */
export class ApiRouter {
  readonly router: Router<AppState>;
  readonly operations: DocumentedOperation[] = [];

  constructor(
    readonly prefix: string,
    private readonly guards: Record<Security, Middleware<AppState>[]>,
    private readonly idempotencyGuard: Middleware<AppState>,
    /** Audits the ops API's commands (`GET /ops/v1/audit`), given their operation id. */
    private readonly opsAudit?: (
      operationId: string,
      options?: { reads: boolean },
    ) => Middleware<AppState>,
    /** Sees each successful JSON exchange (the reference's examples are recorded from them). */
    private readonly recordExchange?: (exchange: RecordedExchange) => void,
  ) {
    this.router = new Router<AppState>({ prefix });
  }

  add<P extends z.ZodType = never, Q extends z.ZodType = never, B extends z.ZodType = never>(
    spec: RouteSpec<P, Q, B>,
    handler: (ctx: AppContext, input: Input<P, Q, B>) => Promise<void>,
  ): this {
    const chain: Middleware<AppState>[] = [...this.guards[spec.security]];
    // Commands are audited; reads too when the break-glass token makes them (ops-audit.ts).
    if (spec.security === 'ops' && this.opsAudit)
      chain.push(this.opsAudit(spec.operationId, { reads: spec.auditReads ?? false }));
    if (spec.roles) chain.push(requireRoles(spec.roles));
    if (spec.idempotent) chain.push(this.idempotencyGuard);
    if (spec.params) chain.push(pathIdsOf(spec.params));
    if (spec.body) chain.push(bodyParsers[spec.bodyType ?? 'json']);
    const schemas = { query: spec.query, body: spec.body };
    const koaPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
    this.router[spec.method](
      koaPath,
      ...chain,
      validated(schemas, async (ctx, input) => {
        await handler(ctx, { params: ctx.params, ...input } as unknown as Input<P, Q, B>);
        if (this.recordExchange) this.record(spec, ctx);
      }),
    );
    this.operations.push({
      spec: spec,
      path: `${this.prefix}${spec.path}`,
    });
    return this;
  }

  /** A 2xx JSON exchange, as sent and answered (a multipart form or a binary answer left out). */
  private record(spec: { operationId: string; bodyType?: string }, ctx: AppContext): void {
    if (ctx.status < 200 || ctx.status >= 300) return;
    const sent = (ctx.request as { body?: unknown }).body;
    const answered = ctx.body;
    const json = (value: unknown) =>
      value !== undefined &&
      value !== null &&
      !Buffer.isBuffer(value) &&
      typeof (value as { pipe?: unknown }).pipe !== 'function';
    this.recordExchange?.({
      operationId: spec.operationId,
      ...(spec.bodyType !== 'multipart' && json(sent) ? { request: sent } : {}),
      status: ctx.status,
      ...(json(answered) ? { response: answered } : {}),
    });
  }
}

/** The first path id (in path order) that cannot name a record answers the resource's 404. */
function pathIdsOf(params: z.ZodType): Middleware<AppState> {
  const shape = params instanceof z.ZodObject ? (params.shape as Record<string, z.ZodType>) : {};
  const entries = Object.entries(shape);
  return async (ctx, next) => {
    const values = (ctx as { params?: Record<string, string> }).params ?? {};
    for (const [name, schema] of entries) {
      if (schema.safeParse(values[name]).success) continue;
      const code = notFoundCodeOf(schema);
      if (!code) throw problems.routeNotFound(ctx.method, ctx.path);
      throw problems.notFound(code, `No ${nouns[code]} with the ${name} in the path.`);
    }
    await next();
  };
}

const nouns: Record<NonNullable<ReturnType<typeof notFoundCodeOf>>, string> = {
  credential_not_found: 'credential',
  operator_not_found: 'operator',
  approval_not_found: 'approval',
  assignment_not_found: 'assignment',
  customer_not_found: 'customer',
  erasure_not_found: 'erasure',
  document_not_found: 'document',
  webhook_endpoint_not_found: 'webhook endpoint',
  delivery_not_found: 'delivery',
  event_not_found: 'event',
  credit_offer_not_found: 'credit offer',
  simulation_not_found: 'simulation',
  smoke_check_not_found: 'smoke check',
  reconciliation_not_found: 'reconciliation',
  loan_not_found: 'loan',
  charge_not_found: 'charge',
  agreement_not_found: 'agreement',
  agreement_simulation_not_found: 'agreement simulation',
  pix_not_found: 'Pix',
  route_not_found: 'route',
};
