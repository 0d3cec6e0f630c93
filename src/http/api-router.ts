import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { z } from 'zod';
import type { AppContext, AppState } from './context.js';
import { formOrJsonBody } from './middleware/form-or-json-body.js';
import { jsonBody } from './middleware/json-body.js';
import { multipartBody } from './middleware/multipart-body.js';
import { validated } from './validate.js';

export type Security = 'partner' | 'ops' | 'none';

const bodyParsers = {
  json: jsonBody,
  'form-or-json': formOrJsonBody,
  multipart: multipartBody,
};

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Response headers worth documenting, e.g. `Location`. */
  headers?: Record<string, string>;
}

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Relative to the router's prefix, in OpenAPI form: `/auth/credentials/{client_id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  security: Security;
  /** Accepts `Idempotency-Key` (creating POSTs). */
  idempotent?: boolean;
  /** Documents path parameters. Ids are not validated here: a malformed id is simply not found. */
  params?: P;
  query?: Q;
  body?: B;
  bodyType?: 'json' | 'form-or-json' | 'multipart';
  /** What the OpenAPI document shows as the body, when it differs from what `body` validates. */
  bodyDocumentation?: z.ZodType;
  responses: Record<number, ResponseSpec>;
  /** Problem codes this operation can answer besides the ones every operation can. */
  errors?: number[];
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
  ) {
    this.router = new Router<AppState>({ prefix });
  }

  add<P extends z.ZodType = never, Q extends z.ZodType = never, B extends z.ZodType = never>(
    spec: RouteSpec<P, Q, B>,
    handler: (ctx: AppContext, input: Input<P, Q, B>) => Promise<void>,
  ): this {
    const chain: Middleware<AppState>[] = [...this.guards[spec.security]];
    if (spec.idempotent) chain.push(this.idempotencyGuard);
    if (spec.body) chain.push(bodyParsers[spec.bodyType ?? 'json']);
    const schemas = { query: spec.query, body: spec.body };
    const koaPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
    this.router[spec.method](
      koaPath,
      ...chain,
      validated(schemas, (ctx, input) =>
        handler(ctx, { params: ctx.params, ...input } as unknown as Input<P, Q, B>),
      ),
    );
    this.operations.push({
      spec: spec,
      path: `${this.prefix}${spec.path}`,
    });
    return this;
  }
}
