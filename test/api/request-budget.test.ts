import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { fakeCpf, registerCustomer } from '../helpers/customers.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { startStack, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
let api: Client;

beforeAll(async () => {
  stack = await startStack({ env: { REQUEST_TIMEOUT: '1s', SANDBOX_REVIEW_DELAY: '1h' } });
  api = client(stack, await tokenFor(stack, (await createPartner(stack)).credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
});

/** Holds the customers table from another transaction until `release`. */
async function holdCustomersTable(): Promise<{ release: () => Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holder = stack.database.sql.begin(async (tx) => {
    await tx`lock table customers in access exclusive mode`;
    locked();
    await released;
  });
  await isLocked;
  return {
    release: async () => {
      release();
      await holder;
    },
  };
}

describe('a request that waits on a dependency past REQUEST_TIMEOUT', () => {
  it('is answered 503 service_unavailable with Retry-After, and the API goes on answering', async () => {
    const customer = await registerCustomer(api);
    // PostgreSQL answers nothing about customers while another transaction holds the table.
    const lock = await holdCustomersTable();
    try {
      const started = Date.now();
      const response = await api(`/v3/customers/${customer.id}`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(await response.json()).toMatchObject({ code: 'service_unavailable' });
      expect(Date.now() - started).toBeLessThan(10_000); // not the database's own timeouts
    } finally {
      await lock.release();
    }
    expect((await api(`/v3/customers/${customer.id}`)).status).toBe(200);
  });

  it('keeps what the work answered under its Idempotency-Key, not the 503', async () => {
    const lock = await holdCustomersTable();
    const cpf = fakeCpf({ notStartingWith9: true });
    const key = randomUUID();
    const register = () =>
      api('/v3/customers', {
        method: 'POST',
        headers: { 'Idempotency-Key': key },
        body: { cpf, name: 'Maria Silva', email: 'maria@example.com', phone: '+5511987654321' },
      });
    try {
      expect((await register()).status).toBe(503);
      // The first try still waits on the table: its key is held.
      const meanwhile = await register();
      expect(meanwhile.status).toBe(409);
      expect(await meanwhile.json()).toMatchObject({ code: 'idempotency_key_in_use' });
    } finally {
      await lock.release();
    }
    // The first try registers the customer once the table is free, and its key keeps that.
    let replay = await register();
    for (let i = 0; replay.status === 409 && i < 50; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      replay = await register();
    }
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const customer = (await replay.json()) as { id: string; cpf: string };
    expect(customer.cpf).toBe(cpf);
    const [{ count }] = await stack.database.sql<[{ count: number }]>`
      select count(*)::int as count from customers where cpf = ${customer.cpf}`;
    expect(count).toBe(1);
  });
});
