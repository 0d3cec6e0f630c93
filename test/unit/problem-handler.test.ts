import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppState } from '../../src/http/context.js';
import { createHttpMetrics } from '../../src/http/metrics.js';
import {
  dependencyUnavailable,
  problemHandler,
} from '../../src/http/middleware/problem-handler.js';
import { requestContext } from '../../src/http/middleware/request-context.js';
import { createLogger } from '../../src/logger.js';
import { listenOnLoopback } from '../helpers/listen.js';

// The real middleware pair, in front of a handler that fails the way a bug would.
const app = new Koa<AppState>();
app.silent = true;
app.use(requestContext(createLogger('silent'), createHttpMetrics({ processMetrics: false })));
app.use(problemHandler('https://api.example.test'));
app.use(() => {
  throw new Error('relation "credentials" does not exist: SELECT secret_hash FROM credentials');
});
let served: Awaited<ReturnType<typeof listenOnLoopback>>;
let url: string;

beforeAll(async () => {
  served = await listenOnLoopback(app);
  url = served.url;
});
afterAll(() => served.close());

describe('an unexpected exception', () => {
  it('is a 500 internal_error that reveals nothing of the failure', async () => {
    const response = await fetch(url);
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      type: 'https://api.example.test/docs/errors#internal_error',
      title: 'Internal Server Error',
      status: 500,
      code: 'internal_error',
      detail: 'An unexpected error occurred. Quote the request id when reporting it.',
    });
    expect(text).not.toMatch(/SELECT|credentials|secret|at .*\.ts/);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('a dependency that cannot serve', () => {
  it('is Temporal unavailable or out of room (gRPC 14, 8) anywhere in the cause chain, not a bug', () => {
    const grpc = (code: number) => Object.assign(new Error(`grpc ${code}`), { code });
    const wrapped = (cause: Error) =>
      new Error('Update-with-Start could not be executed.', { cause });
    // RESOURCE_EXHAUSTED: a workflow's 10 Updates in flight, once the client's retries ran out.
    expect(dependencyUnavailable(wrapped(grpc(8)))).toBe(true);
    expect(dependencyUnavailable(wrapped(grpc(14)))).toBe(true);
    expect(dependencyUnavailable(wrapped(grpc(3)))).toBe(false); // INVALID_ARGUMENT: ours
  });
});
