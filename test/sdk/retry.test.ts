import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../sdk/typescript/src/index.js';
import { fakeCpf } from '../helpers/customers.js';
import { createPartner, type TestPartner } from '../helpers/partners.js';
import { startStack, type TestStack } from '../helpers/stack.js';

/*
 * A retry after a 503 through a proxy on the loopback: the first POST reaches the API (the
 * customer is created) but the client is answered 503; the SDK sends it again with the same
 * Idempotency-Key and the API replays its 201. And a token renewed before it expires by the
 * SDK's own clock.
 */
let stack: TestStack;
let partner: TestPartner;
let proxy: Server;
let proxyUrl: string;
const posts: { key: string | undefined; status: number; replayed: string | null }[] = [];

beforeAll(async () => {
  stack = await startStack();
  partner = await createPartner(stack, 'SDK retry partner');
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers))
          if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name))
            headers.set(name, value);
        const answer = await fetch(`${stack.baseUrl}${req.url}`, {
          method: req.method,
          headers,
          ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
        });
        const body = Buffer.from(await answer.arrayBuffer());
        if (req.method === 'POST' && req.url === '/v3/customers') {
          posts.push({
            key: req.headers['idempotency-key'] as string | undefined,
            status: answer.status,
            replayed: answer.headers.get('idempotent-replayed'),
          });
          // The API did the work; the client hears 503, as from a proxy that lost the answer.
          if (posts.length === 1) {
            res.writeHead(503, { 'retry-after': '0' }).end();
            return;
          }
        }
        res
          .writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? '' })
          .end(body);
      })();
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await stack?.stop();
});

describe('retries against the real service', () => {
  it('retries a POST answered 503 with the same key: one customer, the first answer replayed', async () => {
    const sdk = createClient({
      baseUrl: proxyUrl,
      clientId: partner.credentials.sandbox.client_id,
      clientSecret: partner.credentials.sandbox.client_secret,
    });
    const cpf = fakeCpf({ notStartingWith9: true });
    const customer = await sdk.customers.create({
      cpf,
      name: 'Maria Silva',
      email: `maria.${randomUUID().slice(0, 8)}@example.com`,
      phone: '+5511987654321',
    });
    expect(posts).toHaveLength(2);
    expect(posts[0]!.key).toBeTruthy();
    expect(posts[1]!.key).toBe(posts[0]!.key);
    expect(posts.map((p) => p.status)).toEqual([201, 201]);
    expect(posts[1]!.replayed).toBe('true');
    const withCpf = (await sdk.customers.list().toArray()).filter((c) => c.cpf === cpf);
    expect(withCpf.map((c) => c.id)).toEqual([customer.id]);
  });

  it('renews the token before it expires by its own clock', async () => {
    let now = Date.now();
    const tokens: string[] = [];
    const sdk = createClient({
      baseUrl: stack.baseUrl,
      clientId: partner.credentials.sandbox.client_id,
      clientSecret: partner.credentials.sandbox.client_secret,
      now: () => now,
      fetch: async (request) => {
        const response = await fetch(request);
        if (new URL(request.url).pathname === '/v3/auth/token')
          tokens.push(((await response.clone().json()) as { access_token: string }).access_token);
        return response;
      },
    });
    await sdk.events.list({ limit: 1 }).pages().next();
    await sdk.events.list({ limit: 1 }).pages().next();
    expect(tokens).toHaveLength(1);
    now += 3600_000 - 30_000; // the token's last half minute: renewed before use
    await sdk.events.list({ limit: 1 }).pages().next();
    expect(tokens).toHaveLength(2);
    expect(tokens[1]).not.toBe(tokens[0]);
  });
});
