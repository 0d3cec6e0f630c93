import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { startStack, type TestStack } from '../helpers/stack.js';

/**
 * Every record belongs to one (partner, environment). Another partner's record, or the same
 * partner's record in the other environment, is a 404 with the resource's code — never a 403 —
 * and never shows through a list, a filter or a cursor.
 */
let stack: TestStack;
let owner: Client;
const outsiders: Record<string, Client> = {};

/** How to make a record owned by `owner`, and the 404 code its routes answer. */
interface Resource {
  create: (api: Client) => Promise<string>;
  notFoundCode: string;
  /** The list whose cursor and contents must not leak it. */
  list: string;
}

const resources: Record<string, Resource> = {
  '/v3/auth/credentials/{client_id}': {
    create: async (api) => {
      const response = await api('/v3/auth/credentials', {
        method: 'POST',
        body: { name: 'owned' },
      });
      return ((await response.json()) as { client_id: string }).client_id;
    },
    notFoundCode: 'credential_not_found',
    list: '/v3/auth/credentials',
  },
};

beforeAll(async () => {
  stack = await startStack({ worker: false });
  const [mine, theirs] = [await createPartner(stack, 'Owner'), await createPartner(stack, 'Other')];
  owner = client(stack, await tokenFor(stack, mine.credentials.sandbox));
  outsiders['another partner'] = client(stack, await tokenFor(stack, theirs.credentials.sandbox));
  outsiders['the owner’s production environment'] = client(
    stack,
    await tokenFor(stack, mine.credentials.production),
  );
});
afterAll(async () => {
  await stack?.stop();
});

describe('the tenancy matrix', () => {
  it('covers every partner operation that takes a record id', async () => {
    const document = (await (await fetch(`${stack.baseUrl}/v3/openapi.json`)).json()) as {
      paths: Record<string, object>;
    };
    const parameterized = Object.keys(document.paths).filter((path) => path.includes('{'));
    expect(parameterized.sort()).toEqual(Object.keys(resources).sort());
  });

  for (const [template, resource] of Object.entries(resources)) {
    it(`hides ${template} from other partners and environments`, async () => {
      const document = (await (await fetch(`${stack.baseUrl}/v3/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const methods = Object.keys(document.paths[template] ?? {}).map((m) => m.toUpperCase());
      expect(methods.length).toBeGreaterThan(0);

      const id = await resource.create(owner);
      const path = template.replace(/\{[^}]+\}/, id);
      for (const [who, api] of Object.entries(outsiders)) {
        for (const method of methods) {
          const response = await api(path, { method });
          expect({ who, method, status: response.status }).toEqual({ who, method, status: 404 });
          expect(await response.json()).toMatchObject({ code: resource.notFoundCode });
        }
        const listed = (await (await api(`${resource.list}?limit=100`)).json()) as {
          data: { id: string; client_id?: string }[];
        };
        expect(listed.data.some((item) => Object.values(item).includes(id))).toBe(false);

        // The owner's record id, or its list id, is no cursor in someone else's list.
        const ownList = (await (await owner(`${resource.list}?limit=1`)).json()) as {
          data: { id: string }[];
        };
        const cursor = await api(`${resource.list}?starting_after=${ownList.data[0]!.id}`);
        expect(cursor.status).toBe(400);
        expect(await cursor.json()).toMatchObject({ code: 'invalid_cursor' });
      }
      // The owner still sees it, and every operation still works for the owner.
      expect((await owner(path)).status).toBe(200);
    });
  }
});
