import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createPartner, tokenFor, type TestPartner } from '../helpers/partners.js';
import { startStack, TestClock, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
let partner: TestPartner;
const clock = new TestClock();

beforeAll(async () => {
  stack = await startStack({
    worker: false,
    clock,
    env: { TOKEN_FAILURE_LIMIT: '4', TOKEN_FAILURE_WINDOW: '1m' },
  });
  partner = await createPartner(stack);
});
afterAll(async () => {
  await stack?.stop();
});

const tokenEndpoint = () => `${stack.baseUrl}/v3/auth/token`;

async function expectToken(response: Response) {
  expect(response.status).toBe(200);
  expect(response.headers.get('cache-control')).toBe('no-store');
  const body = (await response.json()) as {
    access_token: string;
    token_type: string;
    expires_in: number;
  };
  expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
  expect(body.access_token.split('.')).toHaveLength(3); // a JWT
  expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
  // The token works: it lists the credentials of its own environment.
  const list = await client(stack, body.access_token)('/v3/auth/credentials');
  expect(list.status).toBe(200);
  return body.access_token;
}

describe('POST /v3/auth/token', () => {
  it('accepts form-encoded credentials', async () => {
    const { client_id, client_secret } = partner.credentials.sandbox;
    const response = await fetch(tokenEndpoint(), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id,
        client_secret,
      }).toString(),
    });
    await expectToken(response);
  });

  it('accepts JSON credentials', async () => {
    const response = await fetch(tokenEndpoint(), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', ...partner.credentials.production }),
    });
    await expectToken(response);
  });

  it('accepts HTTP Basic credentials', async () => {
    const { client_id, client_secret } = partner.credentials.sandbox;
    const response = await fetch(tokenEndpoint(), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${client_id}:${client_secret}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    });
    await expectToken(response);
  });

  it('answers a wrong secret or an unknown client with 401 invalid_client and an OAuth error', async () => {
    for (const credentials of [
      { client_id: partner.credentials.sandbox.client_id, client_secret: 'sk_wrong' },
      {
        client_id: `cli_${'0'.repeat(32)}`,
        client_secret: partner.credentials.sandbox.client_secret,
      },
    ]) {
      const response = await fetch(tokenEndpoint(), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', ...credentials }),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      expect(await response.json()).toMatchObject({
        code: 'invalid_client',
        error: 'invalid_client',
        status: 401,
      });
    }
  });

  it('answers another grant with 400 unsupported_grant_type', async () => {
    const response = await fetch(tokenEndpoint(), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        ...partner.credentials.sandbox,
      }).toString(),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      code: 'unsupported_grant_type',
      error: 'unsupported_grant_type',
    });
  });

  it('answers another media type with 415', async () => {
    const response = await fetch(tokenEndpoint(), {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'grant_type=client_credentials',
    });
    expect(response.status).toBe(415);
  });

  it('limits failed exchanges per client_id, without locking out other clients', async () => {
    const target = await createPartner(stack, 'Brute-forced Partner');
    const attempt = (client_secret: string) =>
      fetch(tokenEndpoint(), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: target.credentials.sandbox.client_id,
          client_secret,
        }),
      });
    for (let i = 0; i < 4; i++) expect((await attempt('sk_guess')).status).toBe(401);
    const blocked = await attempt(target.credentials.sandbox.client_secret);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await blocked.json()).toMatchObject({ code: 'rate_limited' });
    // Another client from the same address is not locked out.
    expect((await tokenFor(stack, partner.credentials.sandbox)).length).toBeGreaterThan(0);
    // The window passes, and the right secret works again.
    clock.advance(60_000);
    expect((await attempt(target.credentials.sandbox.client_secret)).status).toBe(200);
  });
});

describe('bearer tokens', () => {
  it('expire one hour after issue (token_expired)', async () => {
    const token = await tokenFor(stack, partner.credentials.sandbox);
    const api = client(stack, token);
    clock.advance(3599_000);
    expect((await api('/v3/auth/credentials')).status).toBe(200);
    clock.advance(2_000);
    const expired = await api('/v3/auth/credentials');
    expect(expired.status).toBe(401);
    expect(await expired.json()).toMatchObject({ code: 'token_expired' });
  });

  it('stop working at once when their credential is revoked (token_revoked)', async () => {
    const owner = await tokenFor(stack, partner.credentials.sandbox);
    const created = (await (
      await client(stack, owner)('/v3/auth/credentials', {
        method: 'POST',
        body: { name: 'to revoke' },
      })
    ).json()) as {
      client_id: string;
      client_secret: string;
    };
    const doomed = await tokenFor(stack, created);
    expect((await client(stack, doomed)('/v3/auth/credentials')).status).toBe(200);

    const revoked = await client(stack, owner)(`/v3/auth/credentials/${created.client_id}`, {
      method: 'DELETE',
    });
    expect(revoked.status).toBe(200);
    expect(((await revoked.json()) as { revoked_at: string | null }).revoked_at).not.toBeNull();

    const afterwards = await client(stack, doomed)('/v3/auth/credentials');
    expect(afterwards.status).toBe(401);
    expect(await afterwards.json()).toMatchObject({ code: 'token_revoked' });
    // Nor can the revoked credential get a new token.
    const exchange = await fetch(tokenEndpoint(), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: created.client_id,
        client_secret: created.client_secret,
      }),
    });
    expect(exchange.status).toBe(401);
  });

  it('rejects a missing, malformed or foreign-signed token with 401 unauthorized', async () => {
    const token = await tokenFor(stack, partner.credentials.sandbox);
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${Buffer.from('not the signature').toString('base64url')}`;
    for (const authorization of [
      undefined,
      'Bearer',
      'Bearer not-a-jwt',
      `Bearer ${forged}`,
      `Basic ${token}`,
    ]) {
      const response = await fetch(`${stack.baseUrl}/v3/auth/credentials`, {
        headers: authorization ? { Authorization: authorization } : {},
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(await response.json()).toMatchObject({ code: 'unauthorized' });
    }
  });
});

describe('credentials', () => {
  it('are created in the caller’s environment, shown once, listed without secrets', async () => {
    const api = client(stack, await tokenFor(stack, partner.credentials.production));
    const created = await api('/v3/auth/credentials', {
      method: 'POST',
      body: { name: 'reporting job' },
    });
    expect(created.status).toBe(201);
    const body = (await created.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      name: 'reporting job',
      environment: 'production',
      revoked_at: null,
      last_used_at: null,
    });
    expect(body.id).toMatch(/^cred_[0-9a-f]{32}$/);
    expect(body.client_id).toMatch(/^cli_[0-9a-f]{32}$/);
    expect(body.client_secret).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
    expect(created.headers.get('location')).toBe(`/v3/auth/credentials/${String(body.client_id)}`);

    const fetched = (await (await api(created.headers.get('location')!)).json()) as Record<
      string,
      unknown
    >;
    expect(fetched.client_secret).toBeUndefined();
    const listed = (await (await api('/v3/auth/credentials?limit=100')).json()) as {
      data: Record<string, unknown>[];
    };
    expect(listed.data.some((c) => c.client_id === body.client_id)).toBe(true);
    expect(
      listed.data.every((c) => c.client_secret === undefined && c.environment === 'production'),
    ).toBe(true);

    // last_used_at records the latest token exchange.
    await tokenFor(stack, {
      client_id: String(body.client_id),
      client_secret: String(body.client_secret),
    });
    const used = (await (await api(created.headers.get('location')!)).json()) as {
      last_used_at: string | null;
    };
    expect(used.last_used_at).not.toBeNull();
  });

  it('answers an unknown client_id with 404 credential_not_found, on GET and DELETE', async () => {
    const api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
    for (const method of ['GET', 'DELETE']) {
      const response = await api(`/v3/auth/credentials/cli_${'f'.repeat(32)}`, { method });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'credential_not_found' });
    }
  });
});
