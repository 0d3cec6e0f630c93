import type { Middleware } from 'koa';
import { problems } from '../../errors.js';
import type { AppState } from '../context.js';

const isOpsPath = (path: string) =>
  path === '/ops' || path.startsWith('/ops/') || path === '/metrics';
const isProbe = (path: string) => path === '/healthz' || path === '/readyz';

/**
 * With OPS_PORT the ops API (and `/metrics`) answer on that listener only, kept off the network
 * partners reach; it answers nothing else but the health probes. Elsewhere they are unknown routes.
 */
export function separateOpsListener(opsPort: number): Middleware<AppState> {
  return async (ctx, next) => {
    const onOpsListener = ctx.req.socket.localPort === opsPort;
    const allowed = onOpsListener ? isOpsPath(ctx.path) || isProbe(ctx.path) : !isOpsPath(ctx.path);
    if (!allowed) throw problems.routeNotFound(ctx.method, ctx.path);
    await next();
  };
}
