import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Client } from '@temporalio/client';
import { databaseReachable, type Database } from '../../../db/client.js';
import { problems } from '../../../errors.js';
import { temporalReachable } from '../../../temporal/client.js';
import type { AppState } from '../../context.js';
import type { HttpMetrics } from '../../metrics.js';

/**
 * Liveness and readiness, unauthenticated, and Prometheus metrics behind the ops guard (they
 * name routes, volumes and the ledger's balance: not for partners or the internet), outside the
 * versioned API.
 */
export function healthRoutes(deps: {
  database: Database;
  temporal: Client;
  metrics: HttpMetrics;
  /** The ops API's authentication (`guards.ops`): a scraper sends an ops token. */
  opsGuard: Middleware<AppState>[];
}): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', async (ctx) => {
    const [database, temporal] = await Promise.all([
      databaseReachable(deps.database),
      temporalReachable(deps.temporal),
    ]);
    const checks = {
      database: database ? 'ok' : 'unreachable',
      temporal: temporal ? 'ok' : 'unreachable',
    };
    if (!database || !temporal) {
      const down = Object.entries(checks).flatMap(([name, state]) =>
        state === 'ok' ? [] : [name],
      );
      throw problems.serviceUnavailable(`Not ready: ${down.join(' and ')} unreachable.`, {
        checks,
      });
    }
    ctx.body = { status: 'ready', checks };
  });

  router.get('/metrics', ...deps.opsGuard, async (ctx) => {
    ctx.type = deps.metrics.registry.contentType;
    ctx.body = await deps.metrics.registry.metrics();
  });

  return router;
}
