import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook } from '../../src/webhooks/sender.js';
import { allowLoopbackConnectionsOnly } from '../fuzz/loopback-only.js';

// `npm run fuzz` registers webhook endpoints at whatever URLs the fuzzer makes up; its worker
// must never reach them. No packet leaves in this test: every target is refused before connect.
let restore: () => void;
beforeAll(() => {
  restore = allowLoopbackConnectionsOnly();
});
afterAll(() => restore());

describe('the fuzz run’s loopback guard', () => {
  // Names only: an address literal that the guard failed to stop would be a real connection.
  it.each(['https://hooks.partner.example/x', 'https://a/x'])(
    'refuses a delivery to %s before any lookup or connection',
    async (url) => {
      const sent = await postWebhook({ url, headers: {}, body: '{}', allowPrivate: false });
      expect(sent.status).toBeNull();
      expect(sent.error).toContain('the fuzz run connects to the loopback only');
    },
  );

  it('lets loopback connections through', async () => {
    const server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const sent = await postWebhook({
      url: `https://127.0.0.1:${port}/x`,
      headers: {},
      body: '{}',
      allowPrivate: true,
      timeoutMs: 2000,
    });
    server.close();
    // It connected (the plain TCP server then hangs up on the TLS handshake).
    expect(sent.error).not.toContain('loopback only');
  });
});
