import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerCustomer } from '../helpers/customers.js';
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

describe('a request that waits on a dependency past REQUEST_TIMEOUT', () => {
  it('is answered 503 service_unavailable with Retry-After, and the API goes on answering', async () => {
    const customer = await registerCustomer(api);
    // PostgreSQL answers nothing about customers while another transaction holds the table.
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
    try {
      const started = Date.now();
      const response = await api(`/v3/customers/${customer.id}`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(await response.json()).toMatchObject({ code: 'service_unavailable' });
      expect(Date.now() - started).toBeLessThan(10_000); // not the database's own timeouts
    } finally {
      release();
      await holder;
    }
    expect((await api(`/v3/customers/${customer.id}`)).status).toBe(200);
  });
});
