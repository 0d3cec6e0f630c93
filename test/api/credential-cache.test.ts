import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { client, createPartner, tokenFor, type IssuedCredential } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';

// Three API processes' worth of app on one database (each its own pool and its own listening
// connection), sharing the issuer so one's tokens are good at the others.
const PUBLIC_BASE_URL = 'http://api.credential-cache.test';
let a: TestStack; // takes the revocations
let b: TestStack; // caches for an hour: only notifications and the listener's state can stop it
let c: TestStack; // caches for 2 s: the bound when a notification is lost unnoticed
let ownerToken: string;

beforeAll(async () => {
  [a, b, c] = await Promise.all([
    startStack({ env: { PUBLIC_BASE_URL } }),
    startStack({ worker: false, env: { PUBLIC_BASE_URL, CREDENTIAL_CACHE_MAX_AGE: '1h' } }),
    startStack({ worker: false, env: { PUBLIC_BASE_URL, CREDENTIAL_CACHE_MAX_AGE: '2s' } }),
  ]);
  const partner = await createPartner(a);
  ownerToken = await tokenFor(a, partner.credentials.sandbox);
});

afterAll(async () => {
  await Promise.all([a, b, c].map((stack) => stack?.stop()));
});

/** A fresh sandbox credential of the partner, and a token of it. */
async function credential(): Promise<{ clientId: string; token: string }> {
  const response = await client(a, ownerToken)('/v3/auth/credentials', {
    method: 'POST',
    body: { name: 'cached' },
  });
  expect(response.status).toBe(201);
  const created = (await response.json()) as IssuedCredential;
  return { clientId: created.client_id, token: await tokenFor(a, created) };
}

const status = async (stack: TestStack, token: string) =>
  (await client(stack, token)('/v3/customers')).status;

/**
 * A revocation PostgreSQL announces to nobody: triggers off for this transaction only, which
 * takes the owner (the app's role may not turn triggers off).
 */
async function revokeUnannounced(clientId: string): Promise<void> {
  const owner = postgres(inject('ownerDatabaseUrl'), { max: 1, onnotice: () => {} });
  try {
    await owner.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`update credentials set revoked_at = now() where client_id = ${clientId}`;
    });
  } finally {
    await owner.end();
  }
}

describe('credentials kept in memory by each API process', () => {
  it('a revocation answered by one process is refused by another on the very next request', async () => {
    const { clientId, token } = await credential();
    // b has read the credential (and keeps it for an hour, unless told).
    expect(await status(b, token)).toBe(200);
    expect(await status(b, token)).toBe(200);

    const before = Date.now();
    const revoked = await client(a, ownerToken)(`/v3/auth/credentials/${clientId}`, {
      method: 'DELETE',
    });
    expect(revoked.status).toBe(200);
    // It answered when its notification came back, not when the 2 s wait for it ran out.
    expect(Date.now() - before).toBeLessThan(1_900);
    const refused = await client(b, token)('/v3/customers');
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'token_revoked' });
  });

  it('when the listening connection drops, a change made meanwhile is not served from memory', async () => {
    const { clientId, token } = await credential();
    expect(await status(b, token)).toBe(200);

    // Every process's listener is cut off; the revocation below is announced to nobody either.
    const terminated = await a.database.sql<{ pid: number }[]>`
      select pg_terminate_backend(pid) as pid from pg_stat_activity
      where application_name = 'embedded-credit-credential-listener'`;
    expect(terminated.length).toBeGreaterThanOrEqual(1);
    await revokeUnannounced(clientId);

    // b learns of the drop (or of its reconnection) and forgets what it held: well within the hour.
    await eventually(
      async () => ((await status(b, token)) === 401 ? true : undefined),
      'b to refuse the credential revoked while it was not listening',
      5_000,
    );
    // It listens again: it keeps credentials in memory again (one revoked unannounced is served)…
    await eventually(async () => {
      const probe = await credential();
      await status(b, probe.token);
      await revokeUnannounced(probe.clientId);
      return (await status(b, probe.token)) === 200 ? true : undefined;
    }, 'b to keep credentials in memory again');
    // …and hears the next revocation as it is announced: the DELETE answers once a's own
    // listener has it, b takes the same notification on its own event loop (on a busy machine a
    // moment later), well before CREDENTIAL_CACHE_MAX_AGE could have dropped the entry.
    const next = await credential();
    expect(await status(b, next.token)).toBe(200);
    await client(a, ownerToken)(`/v3/auth/credentials/${next.clientId}`, { method: 'DELETE' });
    await eventually(
      async () => ((await status(b, next.token)) === 401 ? true : undefined),
      'b to hear the revocation',
      1_000,
    );
  });

  it('a notification lost without a drop is outlived by no entry older than CREDENTIAL_CACHE_MAX_AGE', async () => {
    const { clientId, token } = await credential();
    expect(await status(c, token)).toBe(200);
    await revokeUnannounced(clientId);
    // Nobody told c: it still serves what it read (this is what the bound is for)…
    expect(await status(c, token)).toBe(200);
    // …but not for longer than its 2 s.
    const revokedAt = Date.now();
    await eventually(
      async () => ((await status(c, token)) === 401 ? true : undefined),
      'c to read the credential again',
      10_000,
    );
    expect(Date.now() - revokedAt).toBeLessThan(2_000 + 2_000);
  });
});
