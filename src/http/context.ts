import type { RouterContext } from '@koa/router';
import { problems } from '../errors.js';
import type { Operator } from '../domain/operators.js';
import type { Logger } from '../logger.js';

export type { Tenant } from '../domain/tenant.js';
import type { Tenant } from '../domain/tenant.js';

/** What every request carries through the middleware chain. */
export interface AppState {
  requestId: string;
  log: Logger;
  /** With tracing on: the request's trace id (src/http/middleware/trace-requests.ts). */
  traceId?: string;
  /** Set by partner authentication. */
  tenant?: Tenant;
  /** The credential whose token authenticated the request. */
  credential?: { id: string; clientId: string };
  /** Set by ops authentication: who is acting, with which roles. */
  operator?: Operator;
  /** What an ops command adds to its audit row (an approval's id, the record it touched). */
  auditDetail?: Record<string, unknown>;
  /** The audit row of the ops command this request runs (the console shows it). */
  auditId?: string;
  /** The body's bytes, on routes whose guard authenticates them (the PSP's notifications). */
  rawBody?: Buffer;
  /** A hosted page's CSRF token, for the forms it shows (src/http/routes/hosted/forms.ts). */
  csrf?: string;
}

export type AppContext = RouterContext<AppState>;

/** The tenant of an authenticated partner request; routes behind partner auth only. */
export function tenantOf(ctx: { state: AppState }): Tenant {
  if (!ctx.state.tenant)
    throw new Error('tenantOf() called on a route without partner authentication');
  return ctx.state.tenant;
}

/** The tenant of a sandbox-only route (`/v3/sandbox/…`): a production token does not see it. */
export function sandboxTenantOf(ctx: { state: AppState; method: string; path: string }): Tenant {
  const tenant = tenantOf(ctx);
  if (tenant.environment !== 'sandbox') throw problems.routeNotFound(ctx.method, ctx.path);
  return tenant;
}
