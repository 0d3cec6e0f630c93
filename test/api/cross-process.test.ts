import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, idempotencyKeys } from '../../src/db/schema/index.js';
import { spawnApiProcess, type ApiProcess } from '../helpers/api-process.js';
import {
  client,
  createPartner,
  tokenFor,
  type IssuedCredential,
  type TestPartner,
} from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';

// Two API processes on one database: a (the test's own, in this process) and b (src/main/api.ts
// in a child process), sharing nothing but PostgreSQL and Temporal. Their limits are the same:
// 30 requests a credential, refilled so slowly (one every 100 s) that no test sees a refill; 4
// failed token exchanges a minute. Credentials are kept in memory for an hour: only a
// notification can make either forget one.
const BURST = 30;
const FAILURES = 4;
const env = {
  RATE_LIMIT_PER_SECOND: '0.01',
  RATE_LIMIT_BURST: String(BURST),
  TOKEN_FAILURE_LIMIT: String(FAILURES),
  TOKEN_FAILURE_WINDOW: '1m',
  CREDENTIAL_CACHE_MAX_AGE: '1h',
};

let stack: TestStack;
let a: { baseUrl: string };
let b: ApiProcess;

beforeAll(async () => {
  stack = await startStack({ worker: false, env });
  a = stack;
  b = await spawnApiProcess(stack, { env });
});
afterAll(async () => {
  await b?.stop();
  await stack?.stop();
});

/** fetch at one API or the other, with a bearer token. */
const at = (api: { baseUrl: string }, token: string) => client(api as TestStack, token);

async function partnerWithToken(): Promise<{ partner: TestPartner; token: string }> {
  const partner = await createPartner(stack);
  return { partner, token: await tokenFor(stack, partner.credentials.sandbox) };
}

describe('the partner rate limit, shared by every API process', () => {
  it('spends one budget across both: remaining counts down whichever answers, then 429 on either', async () => {
    const { token } = await partnerWithToken();
    const remaining: number[] = [];
    for (let i = 0; i < BURST; i++) {
      const response = await at(i % 2 === 0 ? a : b, token)('/v3/auth/credentials');
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-limit')).toBe(String(BURST));
      remaining.push(Number(response.headers.get('ratelimit-remaining')));
    }
    expect(remaining).toEqual(Array.from({ length: BURST }, (_, i) => BURST - 1 - i));

    for (const api of [a, b, a]) {
      const limited = await at(api, token)('/v3/auth/credentials');
      expect(limited.status).toBe(429);
      expect(await limited.json()).toMatchObject({ code: 'rate_limited', status: 429 });
      expect(limited.headers.get('ratelimit-remaining')).toBe('0');
      // One token every 100 s, the last spent moments ago.
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(90);
      expect(retryAfter).toBeLessThanOrEqual(100);
      expect(Number(limited.headers.get('ratelimit-reset'))).toBeGreaterThan(2_900);
    }
  });

  it('hands out each token once when both are hit at the same time', async () => {
    const { token } = await partnerWithToken();
    const sent = 2 * BURST;
    const responses = await Promise.all(
      Array.from({ length: sent }, (_, i) =>
        at(i % 2 === 0 ? a : b, token)('/v3/auth/credentials'),
      ),
    );
    const ok = responses.filter((r) => r.status === 200);
    expect(ok).toHaveLength(BURST);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(sent - BURST);
    // Every whole token left was reported once: 29 down to 0, in whatever order they answered.
    const remaining = ok.map((r) => Number(r.headers.get('ratelimit-remaining')));
    expect(remaining.sort((x, y) => x - y)).toEqual(Array.from({ length: BURST }, (_, i) => i));
  });

  it('counts failed token exchanges of a (client_id, address) pair across both', async () => {
    const { partner } = await partnerWithToken();
    const right = partner.credentials.sandbox;
    const wrong = { ...right, client_secret: 'sk_guess' };
    const exchange = (api: { baseUrl: string }, credential: IssuedCredential) =>
      fetch(`${api.baseUrl}/v3/auth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', ...credential }),
      });
    for (let i = 0; i < FAILURES; i++)
      expect((await exchange(i % 2 === 0 ? a : b, wrong)).status).toBe(401);
    for (const api of [b, a]) {
      const limited = await exchange(api, wrong);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // The right secret still gets its token, at either.
    for (const api of [a, b]) expect((await exchange(api, right)).status).toBe(200);
  });
});

describe('credentials kept in memory by each API process', () => {
  it('a revocation through one process is refused by the other within a bound', async () => {
    const { token: ownerToken } = await partnerWithToken();
    const created = await at(a, ownerToken)('/v3/auth/credentials', {
      method: 'POST',
      body: { name: 'seen by b' },
    });
    expect(created.status).toBe(201);
    const credential = (await created.json()) as IssuedCredential;
    const token = await tokenFor(stack, credential);
    // b reads it once and keeps it (for an hour, unless told).
    for (let i = 0; i < 2; i++) expect((await at(b, token)('/v3/customers')).status).toBe(200);

    const revoked = await at(a, ownerToken)(`/v3/auth/credentials/${credential.client_id}`, {
      method: 'DELETE',
    });
    expect(revoked.status).toBe(200);
    const answeredAt = Date.now();
    // a answered once its own notification came back; b's came at the same time, give or take
    // its event loop: the next request or one a few milliseconds later is refused.
    const refused = await eventually(
      async () => {
        const response = await at(b, token)('/v3/customers');
        return response.status === 401 ? response : undefined;
      },
      'b to refuse the revoked credential',
      1_000,
    );
    expect(Date.now() - answeredAt).toBeLessThan(1_000);
    expect(await refused.json()).toMatchObject({ code: 'token_revoked' });
    expect((await at(a, token)('/v3/customers')).status).toBe(401);
  });
});

describe('Idempotency-Key across API processes', () => {
  it('runs racing duplicates sent to both once: the others get 409 idempotency_key_in_use or the replay', async () => {
    const rounds = 5;
    const perApi = 4;
    for (let round = 0; round < rounds; round++) {
      // A partner per round, so a round's requests spend a budget of their own.
      const { partner, token } = await partnerWithToken();
      const key = `cross-process-${round}`;
      const name = `raced across processes ${round}`;
      const create = (api: { baseUrl: string }, body = { name }) =>
        at(api, token)('/v3/auth/credentials', {
          method: 'POST',
          body,
          headers: { 'Idempotency-Key': key },
        });
      const responses = await Promise.all(
        Array.from({ length: 2 * perApi }, (_, i) => create(i % 2 === 0 ? a : b)),
      );
      const bodies = (await Promise.all(responses.map((r) => r.json()))) as Record<
        string,
        unknown
      >[];
      const ran = responses.filter(
        (r) => r.status === 201 && r.headers.get('idempotent-replayed') === null,
      );
      expect(ran, `round ${round}: exactly one request ran`).toHaveLength(1);
      for (const [i, response] of responses.entries()) {
        expect([201, 409]).toContain(response.status);
        if (response.status === 409) {
          expect(bodies[i]).toMatchObject({ code: 'idempotency_key_in_use' });
          expect(response.headers.get('retry-after')).toBe('1');
        }
      }
      const created = bodies.filter((_, i) => responses[i]!.status === 201);
      expect(new Set(created.map((body) => body.client_id)).size).toBe(1);

      // One credential, one record.
      const { db } = stack.database;
      const rows = await db
        .select()
        .from(credentials)
        .where(and(eq(credentials.partnerId, partner.partner_id), eq(credentials.name, name)));
      expect(rows).toHaveLength(1);
      const records = await db
        .select()
        .from(idempotencyKeys)
        .where(
          and(
            like(idempotencyKeys.scope, `partner:${partner.partner_id}:%`),
            eq(idempotencyKeys.key, key),
          ),
        );
      expect(records).toHaveLength(1);
      expect(records[0]!.state).toBe('completed');

      // Afterwards each process replays the one response, secret included.
      for (const api of [a, b]) {
        const again = await create(api, { name: 'another name' });
        expect(again.status).toBe(201);
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect(await again.json()).toEqual(created[0]);
      }
    }
  });
});
