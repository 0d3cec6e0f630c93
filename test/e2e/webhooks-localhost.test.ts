import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerCustomer } from '../helpers/customers.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';

/*
 * Webhooks to a partner's receiver on this machine, as under `npm run dev`
 * (WEBHOOK_ALLOW_LOOPBACK_HTTP): plain http to localhost, signed as every delivery is.
 */
let stack: TestStack;
let api: Client;
let receiver: Server;
let port: number;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
  stack = await startStack({ env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true' } });
  api = client(stack, await tokenFor(stack, (await createPartner(stack)).credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('webhooks to localhost in development', () => {
  it('deliver signed events over plain http to a receiver on this machine', async () => {
    const created = await api('/v3/webhooks/endpoints', {
      method: 'POST',
      body: { url: `http://localhost:${port}/hook`, events: ['customer.created'] },
    });
    expect(created.status).toBe(201);
    const { secret } = (await created.json()) as { secret: string };
    const customer = await registerCustomer(api);

    const delivery = await eventually(
      async () => received.find((r) => r.body.includes(customer.id)),
      'the customer.created delivery',
    );
    const event = new Webhook(secret).verify(delivery.body, {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': String(delivery.headers['webhook-signature']),
    }) as { type: string; data: { id: string } };
    expect(event).toMatchObject({ type: 'customer.created', data: { id: customer.id } });
  });

  it('still refuse plain http anywhere but this machine', async () => {
    for (const url of ['http://hooks.partner.example/hook', 'http://10.0.0.5:4000/hook']) {
      const refused = await api('/v3/webhooks/endpoints', { method: 'POST', body: { url } });
      expect(refused.status).toBe(422);
    }
    const loopback = await api('/v3/webhooks/endpoints', {
      method: 'POST',
      body: { url: 'http://127.0.0.1:4000/hook' },
    });
    expect(loopback.status).toBe(201);
  });
});
