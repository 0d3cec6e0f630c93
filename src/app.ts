import Router from '@koa/router';
import type { Client } from '@temporalio/client';
import Koa from 'koa';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { problems } from './errors.js';
import type { AppState } from './http/context.js';
import type { HttpMetrics } from './http/metrics.js';
import { opsAuth } from './http/middleware/ops-auth.js';
import { problemHandler } from './http/middleware/problem-handler.js';
import { requestContext } from './http/middleware/request-context.js';
import { docsRoutes } from './http/routes/docs/router.js';
import { healthRoutes } from './http/routes/health/router.js';
import { smokeCheckRoutes } from './http/routes/smoke-checks/router.js';
import type { Logger } from './logger.js';

export interface AppDeps {
  config: Config;
  database: Database;
  temporal: Client;
  logger: Logger;
  metrics: HttpMetrics;
}

/**
 * Builds the Koa app without listening, so tests and the API process mount the same thing.
 * Routing comes before authentication: each route carries its own auth, so an unknown path is a
 * 404 and a known path with the wrong method a 405, with or without a token.
 */
export function createApp(deps: AppDeps): Koa<AppState> {
  const { config, database, temporal, logger, metrics } = deps;
  const commandDeps = { db: database.db, temporal, logger, taskQueue: config.temporal.taskQueue };

  const ops = new Router<AppState>({ prefix: '/ops/v1' });
  ops.use(opsAuth(config.opsToken));
  smokeCheckRoutes(ops, commandDeps);

  const routers = [healthRoutes({ database, temporal, metrics }), docsRoutes(), ops];

  const app = new Koa<AppState>({ proxy: config.nodeEnv === 'production' });
  app.silent = true;
  app.use(requestContext(logger, metrics));
  app.use(problemHandler(config.publicBaseUrl));
  for (const router of routers) app.use(router.routes());
  app.use((ctx) => {
    const allowed = new Set<string>();
    for (const router of routers) {
      for (const layer of router.match(ctx.path, ctx.method).path) {
        for (const method of layer.methods) allowed.add(method);
      }
    }
    if (allowed.size > 0 && !allowed.has(ctx.method))
      throw problems.methodNotAllowed(ctx.method, [...allowed]);
    throw problems.routeNotFound(ctx.method, ctx.path);
  });
  return app;
}
