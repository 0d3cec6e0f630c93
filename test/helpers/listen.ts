import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

/** Serves a Koa app on a free loopback port: its base URL (ending in `/`) and how to stop it. */
export async function listenOnLoopback(
  app: Koa,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
