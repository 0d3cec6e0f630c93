import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, verifyWebhook } from '../../sdk/typescript/src/index.js';
import { fakeCpf } from '../helpers/customers.js';
import { createPartner, type TestPartner } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';

/*
 * `embedded-credit listen` as a developer runs it (the package's bin, in its own process): it
 * relays a real delivery to a local receiver with the original headers and body, prints a line
 * for it, and deletes its endpoint on SIGINT.
 */
const bin = fileURLToPath(new URL('../../sdk/typescript/bin/embedded-credit.js', import.meta.url));
let stack: TestStack;
let partner: TestPartner;
let receiver: Server;
let receiverUrl: string;
let listener: ChildProcess | undefined;
const received: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://localhost:${(receiver.address() as AddressInfo).port}/hook`;
  stack = await startStack({ env: { WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true' } });
  partner = await createPartner(stack, 'SDK listen partner');
});
afterAll(async () => {
  listener?.kill('SIGKILL');
  await stack?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('embedded-credit listen', () => {
  it('relays a real event to a local URL, prints it, and deletes its endpoint on exit', async () => {
    const child = spawn(
      process.execPath,
      [bin, 'listen', '--forward-to', receiverUrl, '--events', 'customer.created'],
      {
        env: {
          ...process.env,
          EMBEDDED_CREDIT_API_URL: stack.baseUrl,
          EMBEDDED_CREDIT_CLIENT_ID: partner.credentials.sandbox.client_id,
          EMBEDDED_CREDIT_CLIENT_SECRET: partner.credentials.sandbox.client_secret,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    listener = child;
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));

    const secret = await eventually(
      async () => /Webhook signing secret: (whsec_\S+)/.exec(output)?.[1],
      `the listener to be ready; it printed:\n${output}`,
    );
    const endpointId = /endpoint (we_[0-9a-f]{32})/.exec(output)![1]!;

    const sdk = createClient({
      baseUrl: stack.baseUrl,
      clientId: partner.credentials.sandbox.client_id,
      clientSecret: partner.credentials.sandbox.client_secret,
    });
    const endpoint = await sdk.webhookEndpoints.retrieve(endpointId);
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);

    const customer = await sdk.customers.create({
      cpf: fakeCpf({ notStartingWith9: true }),
      name: 'Maria Silva',
      email: `maria.${randomUUID().slice(0, 8)}@example.com`,
      phone: '+5511987654321',
    });
    const delivery = await eventually(
      async () => received.find((r) => r.body.includes(customer.id)),
      'the relayed delivery',
    );
    expect(delivery.path).toBe('/hook');
    expect(delivery.headers['user-agent']).toBe('embedded-credit-webhooks/1');
    const event = verifyWebhook(delivery.body, delivery.headers, secret);
    expect(event).toMatchObject({ type: 'customer.created', data: { id: customer.id } });
    const line = await eventually(
      async () => output.split('\n').find((l) => l.includes(event.id)),
      'the event’s line',
    );
    expect(line).toMatch(/^\S+Z {2}customer\.created {2}evt_[0-9a-f]{32} {2}-> 202$/);

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(output).toContain(`endpoint ${endpointId} deleted`);
    const gone = await sdk.webhookEndpoints.retrieve(endpointId).catch((error: unknown) => error);
    expect(gone).toMatchObject({ status: 404 });
  });
});
