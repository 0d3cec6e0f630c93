import { fieldErrorCatalogue } from '../../src/errors.js';
import { disabledEndpointCounts } from '../../src/db/queries/webhook-endpoints.js';
import { webhookEndpoints, workflowOutbox } from '../../src/db/schema/index.js';
import { oldestPendingStartSeconds } from '../../src/temporal/outbox.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { createPartner, tokenFor } from '../helpers/partners.js';

let stack: TestStack;
const ops = { Authorization: `Bearer ${OPS_TOKEN}` };
const json = { ...ops, 'Content-Type': 'application/json' };

beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(async () => {
  await stack?.stop();
});

const call = (path: string, init?: RequestInit) => fetch(`${stack.baseUrl}${path}`, init);

async function expectProblem(
  response: Response,
  status: number,
  code: string,
  from: TestStack = stack,
) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  const body = (await response.json()) as Record<string, unknown>;
  expect(body).toMatchObject({
    type: `${from.config.publicBaseUrl}/docs/errors#${code}`,
    status,
    code,
  });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  return body;
}

describe('every response', () => {
  it('carries API-Version and a request id, echoing the caller’s', async () => {
    const generated = await call('/healthz');
    expect(generated.headers.get('api-version')).toBe('2026-03-01');
    expect(generated.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);

    const echoed = await call('/nowhere', { headers: { 'X-Request-Id': 'partner-trace-42' } });
    expect(echoed.headers.get('x-request-id')).toBe('partner-trace-42');
    expect(echoed.headers.get('api-version')).toBe('2026-03-01');
  });
});

describe('the error model', () => {
  it('answers an unknown route with 404 route_not_found, with or without a token', async () => {
    await expectProblem(await call('/v3/no-such-thing'), 404, 'route_not_found');
    await expectProblem(
      await call('/ops/v1/no-such-thing', { headers: ops }),
      404,
      'route_not_found',
    );
    await expectProblem(await call('/ops/v1/no-such-thing'), 404, 'route_not_found');
  });

  it('answers a wrong method with 405 and an Allow header', async () => {
    const response = await call('/ops/v1/smoke-checks', { method: 'DELETE', headers: ops });
    expect(response.headers.get('allow')).toBe('POST');
    await expectProblem(response, 405, 'method_not_allowed');
    const health = await call('/healthz', { method: 'POST' });
    expect(health.headers.get('allow')).toBe('HEAD, GET');
    await expectProblem(health, 405, 'method_not_allowed');
  });

  it('answers a missing or wrong ops token with 401 and WWW-Authenticate', async () => {
    const missing = await call('/ops/v1/smoke-checks', { method: 'POST', body: '{}' });
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    await expectProblem(missing, 401, 'unauthorized');
    const wrong = await call('/ops/v1/smoke-checks', {
      method: 'POST',
      headers: { Authorization: 'Bearer not-the-token', 'Content-Type': 'application/json' },
      body: '{}',
    });
    await expectProblem(wrong, 401, 'unauthorized');
  });

  it('answers unparseable JSON with 400 invalid_json', async () => {
    const response = await call('/ops/v1/smoke-checks', {
      method: 'POST',
      headers: json,
      body: '{"delay": ',
    });
    await expectProblem(response, 400, 'invalid_json');
  });

  it('answers a body over 1 MiB with 413 payload_too_large', async () => {
    const body = JSON.stringify({ delay: '1s', padding: 'x'.repeat(1024 * 1024) });
    const response = await call('/ops/v1/smoke-checks', { method: 'POST', headers: json, body });
    await expectProblem(response, 413, 'payload_too_large');
  });

  it('answers a body in another media type with 415 unsupported_media_type', async () => {
    const response = await call('/ops/v1/smoke-checks', {
      method: 'POST',
      headers: { ...ops, 'Content-Type': 'text/plain' },
      body: 'delay=1s',
    });
    await expectProblem(response, 415, 'unsupported_media_type');
  });

  it('answers invalid fields with 422, one entry per bad field, unknown fields included', async () => {
    const response = await call('/ops/v1/smoke-checks', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ delay: 'forever', colour: 'blue' }),
    });
    const body = await expectProblem(response, 422, 'validation_error');
    expect(body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'body.delay', code: 'invalid_format' }),
        expect.objectContaining({ path: 'body.colour', code: 'unknown_field' }),
      ]),
    );
    expect(body.errors).toHaveLength(2);
  });

  it('answers an id of the wrong shape with the resource’s 404', async () => {
    await expectProblem(
      await call('/ops/v1/smoke-checks/smk_nothex', { headers: ops }),
      404,
      'smoke_check_not_found',
    );
    await expectProblem(
      await call(`/ops/v1/smoke-checks/smk_${'0'.repeat(32)}`, { headers: ops }),
      404,
      'smoke_check_not_found',
    );
  });
});

describe('documentation', () => {
  it('serves the error page every problem type points to, listing every code', async () => {
    const response = await call('/docs/errors');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await response.text();
    for (const code of [
      'invalid_json',
      'route_not_found',
      'method_not_allowed',
      'payload_too_large',
      'validation_error',
      'internal_error',
      'service_unavailable',
    ]) {
      expect(html).toContain(`id="${code}"`);
    }
    // The field codes of a validation_error, each with its row.
    expect(html).toContain('id="field-codes"');
    for (const code of Object.keys(fieldErrorCatalogue))
      expect(html).toContain(`id="field-${code}"`);
    expect(html).not.toMatch(/<script|https?:\/\/(?!localhost)/);
  });
});

describe('health, readiness and metrics', () => {
  it('reports ready when PostgreSQL and Temporal answer', async () => {
    expect(await (await call('/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await call('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { database: 'ok', temporal: 'ok' },
    });
  });

  it('exposes request counts and latencies by route template and status', async () => {
    await call(`/ops/v1/smoke-checks/smk_${'1'.repeat(32)}`, { headers: ops });
    const text = await (await call('/metrics', { headers: ops })).text();
    expect(text).toMatch(
      /http_requests_total\{method="GET",route="\/ops\/v1\/smoke-checks\/:id",status="404"\} \d+/,
    );
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/healthz",status="200"\}/,
    );
  });
});

describe('the gauges the alert rules read', () => {
  it('are on /metrics, every environment and reason of the disabled endpoints included', async () => {
    const text = await (await call('/metrics', { headers: ops })).text();
    expect(text).toMatch(/^workflow_outbox_oldest_pending_seconds \d+(\.\d+)?$/m);
    for (const environment of ['sandbox', 'production'])
      for (const reason of ['manual', 'gone', 'failing'])
        expect(text).toMatch(
          new RegExp(
            `^webhook_endpoints_disabled\\{environment="${environment}",reason="${reason}"\\} \\d+$`,
            'm',
          ),
        );
  });

  it('count what waits: an unstarted outbox row and a disabled endpoint (rolled back)', async () => {
    const rolledBack = new Error('rolled back');
    const seen = stack.database.db.transaction(async (tx) => {
      await tx.insert(workflowOutbox).values({
        workflowId: `smoke-check/smk_${'9'.repeat(32)}`,
        workflowType: 'smokeCheckWorkflow',
        taskQueue: 'nowhere',
        args: [],
        searchAttributes: {},
        createdAt: new Date(Date.now() - 15 * 60_000),
        nextAttemptAt: new Date(Date.now() + 60 * 60_000),
      });
      // now() is the transaction's start, a moment before the row's time was taken.
      const waited = await oldestPendingStartSeconds(tx);
      expect(waited).toBeGreaterThan(14 * 60);
      expect(waited).toBeLessThan(16 * 60);
      const before = await disabledEndpointCounts(tx);
      const failing = (counts: typeof before) =>
        counts.find((c) => c.environment === 'production' && c.reason === 'failing')?.count ?? 0;
      await tx.insert(webhookEndpoints).values({
        id: `we_${'9'.repeat(32)}`,
        partnerId: 'ptn_gauges',
        environment: 'production',
        url: 'https://receiver.example/hooks',
        events: [],
        status: 'disabled',
        disabledReason: 'failing',
        secretSealed: 'sealed',
      });
      expect(failing(await disabledEndpointCounts(tx))).toBe(failing(before) + 1);
      throw rolledBack;
    });
    await expect(seen).rejects.toBe(rolledBack);
  });
});

describe('/metrics', () => {
  it('is for ops only: without the ops token, or with a partner token, 401 and no figures', async () => {
    const partner = await createPartner(stack);
    const partnerToken = await tokenFor(stack, partner.credentials.sandbox);
    const refusedHeaders: Record<string, string>[] = [
      {},
      { Authorization: `Bearer ${partnerToken}` },
    ];
    for (const headers of refusedHeaders) {
      const refused = await call('/metrics', { headers });
      expect(refused.status).toBe(401);
      expect(await refused.text()).not.toMatch(/http_requests_total|ledger_imbalance/);
    }
    expect((await call('/metrics', { headers: ops })).status).toBe(200);
  });
});

describe('when a dependency is down', () => {
  it('/readyz answers 503 and names what is unreachable', async () => {
    const broken = await startStack({
      worker: false,
      apiDatabaseUrl: 'postgres://nobody:nothing@127.0.0.1:1/none',
      apiTemporalAddress: '127.0.0.1:1',
    });
    try {
      const response = await fetch(`${broken.baseUrl}/readyz`);
      expect(response.headers.get('retry-after')).toBe('5');
      const body = await expectProblem(response, 503, 'service_unavailable', broken);
      expect(body.checks).toEqual({ database: 'unreachable', temporal: 'unreachable' });

      const write = await fetch(`${broken.baseUrl}/ops/v1/smoke-checks`, {
        method: 'POST',
        headers: json,
        body: '{}',
      });
      await expectProblem(write, 503, 'service_unavailable', broken);
    } finally {
      await broken.stop();
    }
  });
});
