import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials } from '../../src/db/schema/index.js';
import { newId } from '../../src/domain/ids.js';
import {
  client,
  createPartner,
  tokenFor,
  type Client,
  type TestPartner,
} from '../helpers/partners.js';
import { startStack, type TestStack } from '../helpers/stack.js';

interface Item {
  id: string;
  created_at: string;
}

let stack: TestStack;
let partner: TestPartner;
let api: Client;
const TOTAL = 300; // 1 from the partner's creation + 149 through the API + 150 sharing one timestamp

beforeAll(async () => {
  stack = await startStack({
    worker: false,
    // 300 live credentials of one partner: far above the default cap of 10.
    env: { RATE_LIMIT_BURST: '5000', MAX_CREDENTIALS_PER_PARTNER: '1000' },
  });
  partner = await createPartner(stack);
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
  for (let i = 0; i < 149; i++) {
    const response = await api('/v3/auth/credentials', {
      method: 'POST',
      body: { name: `api ${i}` },
    });
    expect(response.status).toBe(201);
  }
  // Ties on the sort key are the hard case for cursors: 150 records created in the same millisecond.
  const sameInstant = new Date('2026-01-01T12:00:00.000Z');
  await stack.database.db.insert(credentials).values(
    Array.from({ length: 150 }, (_, i) => ({
      id: newId('cred'),
      partnerId: partner.partner_id,
      environment: 'sandbox' as const,
      clientId: newId('cli'),
      secretHash: 'x'.repeat(64),
      name: `tied ${i}`,
      createdAt: sameInstant,
    })),
  );
});
afterAll(async () => {
  await stack?.stop();
});

async function walk(
  query: string,
): Promise<{ items: Item[]; pages: { size: number; hasMore: boolean }[] }> {
  const items: Item[] = [];
  const pages: { size: number; hasMore: boolean }[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const response = await api(
      `/v3/auth/credentials?${query}${cursor ? `&starting_after=${cursor}` : ''}`,
    );
    expect(response.status).toBe(200);
    const page = (await response.json()) as { data: Item[]; has_more: boolean };
    items.push(...page.data);
    pages.push({ size: page.data.length, hasMore: page.has_more });
    if (!page.has_more) break;
    cursor = page.data.at(-1)!.id;
  }
  return { items, pages };
}

function expectOrdered(items: Item[], order: 'asc' | 'desc') {
  for (let i = 1; i < items.length; i++) {
    const [a, b] = [items[i - 1]!, items[i]!];
    const byTime = Date.parse(a.created_at) - Date.parse(b.created_at);
    const byId = a.id < b.id ? -1 : 1;
    const cmp = byTime !== 0 ? byTime : byId;
    expect(order === 'asc' ? cmp < 0 : cmp > 0).toBe(true);
  }
}

describe('cursor pagination', () => {
  for (const order of ['desc', 'asc'] as const) {
    for (const limit of [7, 100]) {
      it(`walks all ${TOTAL} records with limit=${limit}&order=${order}: no gaps, no duplicates, stable ties`, async () => {
        const { items, pages } = await walk(`limit=${limit}&order=${order}`);
        expect(items).toHaveLength(TOTAL);
        expect(new Set(items.map((item) => item.id)).size).toBe(TOTAL);
        expectOrdered(items, order);
        // has_more is exact: true on every full page but the last, false on the last even when full.
        expect(pages.slice(0, -1).every((page) => page.size === limit && page.hasMore)).toBe(true);
        expect(pages.at(-1)!.hasMore).toBe(false);
        expect(pages.at(-1)!.size).toBe(TOTAL % limit || limit);
      });
    }
  }

  it('returns the same sequence when walked twice', async () => {
    const [first, second] = [await walk('limit=13'), await walk('limit=13')];
    expect(second.items.map((i) => i.id)).toEqual(first.items.map((i) => i.id));
  });

  it('defaults to 25 per page, newest first', async () => {
    const page = (await (await api('/v3/auth/credentials')).json()) as {
      data: Item[];
      has_more: boolean;
    };
    expect(page.data).toHaveLength(25);
    expect(page.has_more).toBe(true);
    expectOrdered(page.data, 'desc');
  });

  it('answers an unknown cursor with 400 invalid_cursor', async () => {
    const response = await api(`/v3/auth/credentials?starting_after=cred_${'0'.repeat(32)}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'invalid_cursor' });
  });

  it('returns an empty page, has_more false, for an empty list', async () => {
    const lonely = await createPartner(stack, 'Lonely');
    const production = client(stack, await tokenFor(stack, lonely.credentials.production));
    const { data, has_more } = (await (await production('/v3/auth/credentials')).json()) as {
      data: Item[];
      has_more: boolean;
    };
    expect(data.map((item) => item.id)).toHaveLength(1); // its own production credential
    expect(has_more).toBe(false);
    const last = await production(`/v3/auth/credentials?starting_after=${data[0]!.id}`);
    expect(await last.json()).toEqual({ data: [], has_more: false });
  });
});

describe('validation of a list query and a create body', () => {
  it('reports every bad query field at once, unknown ones included', async () => {
    const response = await api('/v3/auth/credentials?limit=0&sort=name&order=sideways&colour=blue');
    expect(response.status).toBe(422);
    const body = (await response.json()) as { errors: { path: string; code: string }[] };
    expect(body.errors.map((e) => `${e.path}:${e.code}`).sort()).toEqual(
      [
        'query.colour:unknown_field',
        'query.limit:out_of_range',
        'query.order:invalid_value',
        'query.sort:invalid_value',
      ].sort(),
    );
  });

  it.each([
    ['limit=101', 'query.limit', 'out_of_range'],
    ['limit=2.5', 'query.limit', 'invalid_type'],
    ['limit=ten', 'query.limit', 'invalid_type'],
  ])('refuses %s', async (query, path, code) => {
    const response = await api(`/v3/auth/credentials?${query}`);
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ errors: [{ path, code }] });
  });

  it('reports every bad body field at once and creates nothing', async () => {
    const before = (await walk('limit=100')).items.length;
    for (const [body, expected] of [
      [{ name: '' }, ['body.name:too_short']],
      [{ name: 'x'.repeat(101) }, ['body.name:too_long']],
      [
        { name: 42, secret: 'mine', environment: 'production' },
        ['body.environment:unknown_field', 'body.name:invalid_type', 'body.secret:unknown_field'],
      ],
      [[], ['body:invalid_type']],
    ] as const) {
      const response = await api('/v3/auth/credentials', { method: 'POST', body });
      expect(response.status).toBe(422);
      const problem = (await response.json()) as {
        errors: { path: string; code: string }[];
        detail: string;
      };
      expect(problem.errors.map((e) => `${e.path}:${e.code}`).sort()).toEqual([...expected].sort());
      expect(problem.detail).toBe(
        expected.length === 1 ? '1 field is invalid.' : `${expected.length} fields are invalid.`,
      );
    }
    expect((await walk('limit=100')).items.length).toBe(before);
  });
});
