import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTED_PAGE_CSP } from '../../src/http/middleware/security-headers.js';
import { createPartner, tokenFor } from '../helpers/partners.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
let token: string;

beforeAll(async () => {
  stack = await startStack({ worker: false });
  token = await tokenFor(stack, (await createPartner(stack)).credentials.sandbox);
});
afterAll(async () => {
  await stack?.stop();
});

const get = (base: string, path: string, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { headers, redirect: 'manual' });

/** One request of each kind the service answers, and what kind it is. */
const routeKinds = (auth: string): [string, string, Record<string, string>, 'api' | 'hosted'][] => [
  ['partner API, 200', '/v3/auth/credentials', { Authorization: `Bearer ${auth}` }, 'api'],
  ['partner API, 401 problem', '/v3/customers', {}, 'api'],
  ['unknown path, 404 problem', '/v3/nowhere', {}, 'api'],
  ['ops API', '/ops/v1/openapi.json', { Authorization: `Bearer ${OPS_TOKEN}` }, 'api'],
  ['OpenAPI document', '/v3/openapi.json', {}, 'api'],
  ['reference page', '/docs', {}, 'api'],
  ['liveness', '/healthz', {}, 'api'],
  ['metrics', '/metrics', { Authorization: `Bearer ${OPS_TOKEN}` }, 'api'],
  ['hosted signing page, unknown link', '/hosted/signing/not-a-link', {}, 'hosted'],
  ['hosted signing contract, unknown link', '/hosted/signing/not-a-link/contract', {}, 'hosted'],
  ['hosted biometrics page, unknown link', '/hosted/biometrics/not-a-link', {}, 'hosted'],
];

describe('security headers on every kind of answer (contract §15)', () => {
  it.each(routeKinds('set below').map(([name, path, , kind]) => [name, path, kind]))(
    '%s (%s)',
    async (_name, path, kind) => {
      const [, , headers] = routeKinds(token).find(([, p]) => p === path)!;
      const response = await get(stack.baseUrl, path, headers);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      // PUBLIC_BASE_URL is http here: no HSTS promise over plain http.
      expect(response.headers.get('strict-transport-security')).toBeNull();
      if (kind === 'api') {
        expect(response.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
      } else {
        expect(response.headers.get('content-security-policy')).toBe(HOSTED_PAGE_CSP);
        expect(response.headers.get('referrer-policy')).toBe('no-referrer');
        expect(response.headers.get('cache-control')).toBe('no-store');
        expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      }
    },
  );

  it('is the policy contract §15 spells out for hosted pages', () => {
    expect(HOSTED_PAGE_CSP).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'",
    );
  });
});

describe('hosted pages are throttled per link (429 page)', () => {
  it('answers a hammered link with a 429 page and Retry-After, and other links normally', async () => {
    const link = `/hosted/signing/hammered-${Date.now()}`;
    // 30 at once, then one every 2 s (the link's bucket): on a busy machine the 30 requests may
    // take long enough for a token or two to come back, so count what got through.
    const started = Date.now();
    let served = 0;
    let refused: Response | undefined;
    while (!refused && served < 100) {
      const response = await get(stack.baseUrl, link);
      if (response.status === 429) refused = response;
      else {
        expect(response.status).toBe(404);
        served++;
      }
    }
    const refilled = Math.ceil(((Date.now() - started) / 1000) * 0.5);
    expect(served).toBeGreaterThanOrEqual(30);
    expect(served).toBeLessThanOrEqual(30 + refilled);
    if (!refused) throw new Error('never refused');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await refused.text()).toContain('Muitas tentativas');
    expect((await get(stack.baseUrl, `${link}-other`)).status).toBe(404);
  });
});

describe('behind a trusted proxy (TRUSTED_PROXY_COUNT=1, PUBLIC_BASE_URL https)', () => {
  let proxied: TestStack;
  beforeAll(async () => {
    proxied = await startStack({
      worker: false,
      env: { TRUSTED_PROXY_COUNT: '1', PUBLIC_BASE_URL: 'https://credit.example' },
    });
  });
  afterAll(async () => {
    await proxied?.stop();
  });

  it('promises https (HSTS) on API answers and hosted pages', async () => {
    for (const path of ['/healthz', '/hosted/signing/not-a-link']) {
      expect((await get(proxied.baseUrl, path)).headers.get('strict-transport-security')).toBe(
        'max-age=31536000; includeSubDomains',
      );
    }
  });

  it('throttles the address the proxy saw; entries a client writes before it change nothing', async () => {
    const from = (entries: string) => ({ 'X-Forwarded-For': entries });
    // Requests from one address, each to a different link, until the address's bucket (120,
    // refilling 2 a second) runs dry.
    let status = 0;
    let sent = 0;
    while (status !== 429 && sent < 1000) {
      status = (await get(proxied.baseUrl, `/hosted/signing/scan-${sent++}`, from('198.51.100.1')))
        .status;
    }
    expect(status).toBe(429);
    expect(sent).toBeGreaterThan(120);
    // A client prepending addresses of its own is still the address the proxy appended.
    const forged = await get(
      proxied.baseUrl,
      '/hosted/signing/scan-y',
      from('203.0.113.9, 198.51.100.2, 198.51.100.1'),
    );
    expect(forged.status).toBe(429);
    // Another address the proxy saw has its own bucket.
    expect(
      (await get(proxied.baseUrl, '/hosted/signing/scan-z', from('198.51.100.2'))).status,
    ).toBe(404);
  });
});
