import { describe, expect, it } from 'vitest';
import { createClient } from '../../sdk/typescript/src/index.js';
import { backoffDelay, defaultRetryPolicy } from '../../sdk/typescript/src/transport.js';

/*
 * The SDK's retry schedule and token cache, over a fake fetch: which answers are retried, what is
 * waited (the delays asked of `sleep`, never measured), and which key and token each attempt
 * carries.
 */
interface Sent {
  method: string;
  path: string;
  key: string | null;
  authorization: string | null;
}

function fakeApi(answers: ((sent: Sent) => Response | Error)[]) {
  const sent: Sent[] = [];
  const waits: number[] = [];
  let tokens = 0;
  let now = 1_000_000;
  const fetch = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    if (path === '/v3/auth/token') {
      tokens += 1;
      return Response.json({
        access_token: `tok${tokens}`,
        token_type: 'Bearer',
        expires_in: 3600,
      });
    }
    const entry = {
      method: request.method,
      path,
      key: request.headers.get('idempotency-key'),
      authorization: request.headers.get('authorization'),
    };
    sent.push(entry);
    const answer = answers[Math.min(sent.length - 1, answers.length - 1)]!(entry);
    if (answer instanceof Error) throw answer;
    return answer;
  };
  const client = createClient({
    baseUrl: 'http://api.test',
    clientId: 'cli_test',
    clientSecret: 'secret',
    fetch,
    now: () => now,
    sleep: async (ms) => void waits.push(ms),
    random: () => 0.999,
  });
  return {
    client,
    sent,
    waits,
    tokens: () => tokens,
    advance: (ms: number) => (now += ms),
  };
}

const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
  Response.json(
    { type: 'about:blank', title: code, status, detail: code, code },
    { status, headers: { 'content-type': 'application/problem+json', ...headers } },
  );
const customer = { id: 'cust_1', name: 'Maria' };
const created = () => Response.json(customer, { status: 201 });
const body = { cpf: '52998224725', name: 'Maria', email: 'm@example.com', phone: '+5511987654321' };

describe('retries', () => {
  it('retries 503 and 429 with one idempotency key, honouring Retry-After', async () => {
    const api = fakeApi([
      () => problem(503, 'service_unavailable'),
      () => problem(429, 'rate_limited', { 'retry-after': '7' }),
      () => new TypeError('fetch failed'),
      created,
    ]);
    expect(await api.client.customers.create(body)).toEqual(customer);
    expect(api.sent).toHaveLength(4);
    const keys = new Set(api.sent.map((s) => s.key));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
    // Backoff below 500 ms, then Retry-After's 7 s, then below 2 s.
    expect(api.waits).toEqual([499, 7000, 1998]);
  });

  it('keeps a caller’s own key', async () => {
    const api = fakeApi([() => problem(503, 'service_unavailable'), created]);
    await api.client.customers.create(body, { idempotencyKey: 'order-42' });
    expect(api.sent.map((s) => s.key)).toEqual(['order-42', 'order-42']);
  });

  it('retries 409 idempotency_key_in_use (the first attempt still being stored)', async () => {
    const api = fakeApi([() => problem(409, 'idempotency_key_in_use'), created]);
    await api.client.customers.create(body);
    expect(api.sent).toHaveLength(2);
  });

  it.each([
    [400, 'invalid_json'],
    [404, 'customer_not_found'],
    [409, 'invalid_state'],
    [422, 'validation_error'],
  ])('never retries %i %s', async (status, code) => {
    const api = fakeApi([() => problem(status, code), created]);
    const error = await api.client.customers.create(body).catch((e: unknown) => e);
    expect(error).toMatchObject({ status, code });
    expect(api.sent).toHaveLength(1);
    expect(api.waits).toEqual([]);
  });

  it('gives up after maxRetries and throws the last problem', async () => {
    const api = fakeApi([() => problem(503, 'service_unavailable')]);
    const error = await api.client.customers.retrieve('cust_1').catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(api.sent).toHaveLength(1 + defaultRetryPolicy.maxRetries);
    expect(api.sent.every((s) => s.key === null)).toBe(true); // GETs carry no key
  });

  it('draws full jitter below a doubling ceiling, capped; Retry-After as a date too', () => {
    const policy = { maxRetries: 10, baseDelayMs: 100, maxDelayMs: 1000 };
    expect([0, 1, 2, 3, 4].map((n) => backoffDelay(n, null, policy, () => 0.5))).toEqual([
      50, 100, 200, 400, 500,
    ]);
    expect(backoffDelay(0, null, policy, () => 0)).toBe(0);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(backoffDelay(0, 'Thu, 01 Jan 2026 00:00:00 GMT', policy, () => 0.5, now)).toBe(0);
    expect(backoffDelay(0, '120', policy, () => 0.5, now)).toBe(1000);
  });
});

describe('tokens', () => {
  it('caches the token, renews it a minute before it expires, and once after a 401', async () => {
    const api = fakeApi([
      () => Response.json(customer),
      () => Response.json(customer),
      () => Response.json(customer),
      () => problem(401, 'token_revoked'),
      () => Response.json(customer),
    ]);
    await api.client.customers.retrieve('cust_1');
    await api.client.customers.retrieve('cust_1');
    expect(api.tokens()).toBe(1);
    api.advance(3600_000 - 59_000); // inside the renewal minute
    await api.client.customers.retrieve('cust_1');
    expect(api.tokens()).toBe(2);
    await api.client.customers.retrieve('cust_1'); // 401, then again with a new token
    expect(api.tokens()).toBe(3);
    expect(api.sent.map((s) => s.authorization)).toEqual([
      'Bearer tok1',
      'Bearer tok1',
      'Bearer tok2',
      'Bearer tok2',
      'Bearer tok3',
    ]);
  });

  it('shares one token request between concurrent calls', async () => {
    const api = fakeApi([() => Response.json(customer)]);
    await Promise.all([1, 2, 3].map(() => api.client.customers.retrieve('cust_1')));
    expect(api.tokens()).toBe(1);
  });
});
