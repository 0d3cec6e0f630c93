import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppState } from '../../src/http/context.js';
import { createHttpMetrics } from '../../src/http/metrics.js';
import { problemHandler } from '../../src/http/middleware/problem-handler.js';
import { requestBudget } from '../../src/http/middleware/request-budget.js';
import { requestContext } from '../../src/http/middleware/request-context.js';
import { createLogger } from '../../src/logger.js';
import { listenOnLoopback } from '../helpers/listen.js';

// The real middleware, in front of a handler that answers after the budget: a 201 and a file.
const late: { status?: number; stream?: Readable } = {};
const app = new Koa<AppState>();
app.silent = true;
app.use(requestContext(createLogger('silent'), createHttpMetrics({ processMetrics: false })));
app.use(problemHandler('https://api.example.test'));
app.use(requestBudget(50, 'https://api.example.test'));
app.use(async (ctx) => {
  await sleep(150);
  ctx.status = 201;
  late.stream = Readable.from(['a file nobody will read']);
  ctx.body = late.stream;
  late.status = ctx.status;
});
let served: Awaited<ReturnType<typeof listenOnLoopback>>;
let url: string;

beforeAll(async () => {
  served = await listenOnLoopback(app);
  url = served.url;
});
afterAll(() => served.close());

describe('a request over its budget', () => {
  it('is answered 503 at once; its work keeps its own answer, and a stream it sets is closed', async () => {
    const response = await fetch(url);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toMatchObject({ code: 'service_unavailable' });
    await sleep(250);
    // The work wrote to a response of its own: its status is its own, not the 503 (what an
    // Idempotency-Key stores), and the file it opened was not left open.
    expect(late.status).toBe(201);
    expect(late.stream?.destroyed).toBe(true);
  });
});
