import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  completeIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  IDEMPOTENCY_LOCK_MS,
} from '../../src/db/queries/idempotency.js';
import { credentials, idempotencyKeys } from '../../src/db/schema/index.js';
import {
  client,
  createPartner,
  tokenFor,
  type Client,
  type TestPartner,
} from '../helpers/partners.js';
import { eventually } from '../helpers/eventually.js';
import { staff } from '../helpers/operators.js';
import { OPS_TOKEN, startStack, TestClock, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
let partner: TestPartner;
let api: Client;
const clock = new TestClock();

beforeAll(async () => {
  stack = await startStack({ worker: false, clock });
  partner = await createPartner(stack);
});
// A fresh token per test (and after each clock jump): tokens last an hour of the test clock.
const freshToken = async () => {
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
};
beforeEach(freshToken);
afterAll(async () => {
  await stack?.stop();
});

const create = (key: string, name: string) =>
  api('/v3/auth/credentials', {
    method: 'POST',
    body: { name },
    headers: { 'Idempotency-Key': key },
  });

async function credentialsNamed(name: string) {
  return stack.database.db
    .select()
    .from(credentials)
    .where(and(eq(credentials.partnerId, partner.partner_id), eq(credentials.name, name)));
}

async function keyRow(scope: string, key: string) {
  return stack.database.db.query.idempotencyKeys.findFirst({
    where: and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)),
  });
}

describe('Idempotency-Key', () => {
  it('replays the first response — status, Location, body, the same secret — without running again', async () => {
    const first = await create('replay-1', 'replayed');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const firstBody = (await first.json()) as { client_id: string; client_secret: string };

    // The body of a repeat is not compared: the first response comes back all the same.
    const again = await create('replay-1', 'a different name');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(await again.json()).toEqual(firstBody);

    expect(await credentialsNamed('replayed')).toHaveLength(1);
    expect(await credentialsNamed('a different name')).toHaveLength(0);
    // The replayed secret is the real one.
    expect((await tokenFor(stack, firstBody)).length).toBeGreaterThan(0);
  });

  it('runs racing duplicates once: the others get 409 idempotency_key_in_use or the replay', async () => {
    const responses = await Promise.all(Array.from({ length: 8 }, () => create('race-1', 'raced')));
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as Record<string, unknown>[];
    const created = bodies.filter((_, i) => statuses[i] === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((b) => b.client_id)).size).toBe(1);
    for (const [i, body] of bodies.entries()) {
      if (statuses[i] === 409) {
        expect(body).toMatchObject({ code: 'idempotency_key_in_use' });
        expect(responses[i]!.headers.get('retry-after')).toBe('1');
      }
    }
    expect(await credentialsNamed('raced')).toHaveLength(1);
  });

  it('frees the key of a request whose process died once its hold lapses, and only then', async () => {
    // What a process killed mid-request leaves behind: its key running, renewed no more.
    const scope = `partner:${partner.partner_id}:sandbox`;
    const now = clock.now();
    const orphan = { scope, key: 'orphan-1', claimId: randomUUID() };
    await stack.database.db.insert(idempotencyKeys).values({
      ...orphan,
      requestMethod: 'POST',
      requestPath: '/v3/auth/credentials',
      state: 'running',
      lockedUntil: new Date(now.getTime() + IDEMPOTENCY_LOCK_MS),
      createdAt: now,
      expiresAt: new Date(now.getTime() + 24 * 3600_000),
    });
    const held = await create('orphan-1', 'orphaned');
    expect(held.status).toBe(409);
    expect(await held.json()).toMatchObject({ code: 'idempotency_key_in_use' });

    clock.advance(IDEMPOTENCY_LOCK_MS + 1000);
    await freshToken();
    const retried = await create('orphan-1', 'orphaned');
    expect(retried.status).toBe(201);
    // The dead holder's outcome, were it to come, no longer lands on the key.
    const late = { status: 500, headers: {}, sealedBody: '' };
    expect(await completeIdempotencyKey(stack.database.db, orphan, late)).toBe(false);
    const replay = await create('orphan-1', 'orphaned');
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await credentialsNamed('orphaned')).toHaveLength(1);
  });

  it('stores the outcome of work that committed though its connection dropped before', async () => {
    const sql = stack.database.sql;
    const scope = `partner:${partner.partner_id}:sandbox`;
    // The credential waits on its table, so the key is claimed and the work not done yet.
    const tableLock = await sql.reserve();
    const keyLock = await sql.reserve();
    try {
      await tableLock`begin`;
      await tableLock`lock table credentials in exclusive mode`;
      const pending = create('dropped-1', 'dropped');
      await eventually(
        async () => ((await keyRow(scope, 'dropped-1'))?.state === 'running' ? true : undefined),
        'the key claimed',
      );
      // The key's row locked too: storing the outcome will wait, on a connection about to drop.
      await keyLock`begin`;
      await keyLock`select 1 from idempotency_keys where scope = ${scope} and key = 'dropped-1' for update`;
      const [{ pid: keyLocker }] = await keyLock<[{ pid: number }]>`select pg_backend_pid() as pid`;
      await tableLock`commit`; // the work commits
      const waiting = () => sql<{ pid: number }[]>`
        select pid from pg_stat_activity where ${keyLocker} = any(pg_blocking_pids(pid))`;
      const dropped = await eventually(
        async () => (await waiting())[0]?.pid,
        'the outcome waiting on the row',
      );
      await sql`select pg_terminate_backend(${dropped})`;
      // Stored again on a new connection, which waits on the row in turn.
      await eventually(
        async () => ((await waiting()).some((row) => row.pid !== dropped) ? true : undefined),
        'the outcome stored again on a new connection',
      );
      await keyLock`commit`;

      const first = await pending;
      expect(first.status).toBe(201);
      const replay = await create('dropped-1', 'dropped');
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.json()).toEqual(await first.json());
      expect(await credentialsNamed('dropped')).toHaveLength(1);
    } finally {
      await tableLock`rollback`.catch(() => {});
      await keyLock`rollback`.catch(() => {});
      tableLock.release();
      keyLock.release();
    }
  });

  it('lets a key be used anew after 24 hours', async () => {
    const first = (await (await create('expiring-1', 'day one')).json()) as { client_id: string };
    clock.advance(23 * 3600_000);
    await freshToken();
    const withinDay = await create('expiring-1', 'day two');
    expect(withinDay.headers.get('idempotent-replayed')).toBe('true');
    expect(((await withinDay.json()) as { client_id: string }).client_id).toBe(first.client_id);

    clock.advance(1 * 3600_000 + 1000);
    await freshToken();
    const nextDay = await create('expiring-1', 'day two');
    expect(nextDay.status).toBe(201);
    expect(nextDay.headers.get('idempotent-replayed')).toBeNull();
    expect(((await nextDay.json()) as { client_id: string }).client_id).not.toBe(first.client_id);
  });

  it('replays a first 422 too, and keys are per partner and environment', async () => {
    const invalid = await api('/v3/auth/credentials', {
      method: 'POST',
      body: { name: '' },
      headers: { 'Idempotency-Key': 'bad-first' },
    });
    expect(invalid.status).toBe(422);
    const repeat = await create('bad-first', 'now valid');
    expect(repeat.status).toBe(422);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');

    // The same key in the production environment is another key.
    const production = client(stack, await tokenFor(stack, partner.credentials.production));
    const elsewhere = await production('/v3/auth/credentials', {
      method: 'POST',
      body: { name: 'prod' },
      headers: { 'Idempotency-Key': 'bad-first' },
    });
    expect(elsewhere.status).toBe(201);
  });

  it('refuses a malformed key, changing nothing', async () => {
    for (const key of ['x'.repeat(256), 'tab\there']) {
      const response = await create(key, 'never');
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({
        code: 'validation_error',
        errors: [{ path: 'header.Idempotency-Key', code: 'invalid_format' }],
      });
    }
    expect(await credentialsNamed('never')).toHaveLength(0);
  });

  it('refuses a key reused on another operation of the same scope', async () => {
    const ops = (path: string, body: unknown) =>
      fetch(`${stack.baseUrl}/ops/v1${path}`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${OPS_TOKEN}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': 'ops-once',
        },
        body: JSON.stringify(body),
      });
    expect((await ops('/partners', { name: 'Keyed Partner' })).status).toBe(201);
    const reused = await ops('/smoke-checks', {});
    expect(reused.status).toBe(409);
    expect(await reused.json()).toMatchObject({
      code: 'invalid_state',
      detail: expect.stringContaining('POST /ops/v1/partners') as unknown,
    });
    // The partner key space is another scope: the same key is a first use there.
    expect((await create('ops-once', 'partner scope')).status).toBe(201);
  });

  it("keeps each operator's keys to that operator: another's request under the same key runs anew and never sees the first answer's secrets (issue 37)", async () => {
    const [first, second] = staff().admins;
    const key = `shared-${randomUUID()}`;
    const createPartnerAs = (token: string, name: string) =>
      fetch(`${stack.baseUrl}/ops/v1/partners`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': key,
        },
        body: JSON.stringify({ name }),
      });
    const mine = await createPartnerAs(first.token, 'First admin’s partner');
    expect(mine.status).toBe(201);
    const created = (await mine.json()) as TestPartner;

    // The second administrator replays the first one's key: a partner of its own, not a replay.
    const theirs = await createPartnerAs(second.token, 'Second admin’s partner');
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    const text = await theirs.text();
    expect((JSON.parse(text) as TestPartner).partner_id).not.toBe(created.partner_id);
    for (const credential of Object.values(created.credentials))
      expect(text).not.toContain(credential.client_secret);

    // The first administrator's own retry is still the replay, secrets included.
    const retried = await createPartnerAs(first.token, 'First admin’s partner');
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(await retried.json()).toEqual(created);

    // The issue's own case, on POST /ops/v1/operators: B's request under A's key is B's own.
    const operatorKey = `operator-${randomUUID()}`;
    const askAs = (token: string, email: string) =>
      fetch(`${stack.baseUrl}/ops/v1/operators`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': operatorKey,
        },
        body: JSON.stringify({ name: 'New hire', email, roles: ['kyc_reviewer'] }),
      });
    const asked = await askAs(first.token, `a-${randomUUID()}@lender.example`);
    expect(asked.status).toBe(202);
    const askedBody = (await asked.json()) as { id: string };
    const theirsAsked = await askAs(second.token, `b-${randomUUID()}@lender.example`);
    expect(theirsAsked.status).toBe(202);
    expect(theirsAsked.headers.get('idempotent-replayed')).toBeNull();
    expect(await theirsAsked.json()).toMatchObject({
      maker: { id: second.operator.id },
      id: expect.not.stringMatching(askedBody.id) as unknown,
    });
  });
});

describe('idempotency housekeeping', () => {
  it('purges records past their 24 hours and keeps live ones', async () => {
    const { db } = stack.database;
    const now = new Date();
    const record = (key: string, expiresAt: Date) => ({
      scope: 'housekeeping-test',
      key,
      requestMethod: 'POST',
      requestPath: '/v3/auth/credentials',
      state: 'completed' as const,
      lockedUntil: now,
      createdAt: new Date(expiresAt.getTime() - 86_400_000),
      expiresAt,
    });
    await db
      .insert(idempotencyKeys)
      .values([
        record('expired', new Date(now.getTime() - 1000)),
        record('live', new Date(now.getTime() + 60_000)),
      ]);
    expect(await deleteExpiredIdempotencyKeys(db, now)).toBeGreaterThanOrEqual(1);
    const left = await db
      .select()
      .from(idempotencyKeys)
      .where(eq(idempotencyKeys.scope, 'housekeeping-test'));
    expect(left.map((row) => row.key)).toEqual(['live']);
  });
});
