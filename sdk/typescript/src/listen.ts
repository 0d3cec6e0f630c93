/**
 * Webhooks on localhost: a relay on the loopback that a sandbox webhook endpoint points at, and
 * that forwards each delivery — its headers and body as they came, signature included — to a
 * local URL, answering the API with the local answer's status (so a failing receiver sees the
 * API's retries). The endpoint is deleted when the relay closes.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmbeddedCreditClient } from './client.js';
import type { CreatedWebhookEndpoint, JsonBody } from './types.js';

type EventFilters = NonNullable<JsonBody<'/v3/webhooks/endpoints', 'post'>['events']>;

export interface ListenOptions {
  client: EmbeddedCreditClient;
  /** Where each delivery goes: `http://localhost:4000/hook`. */
  forwardTo: string;
  /** Event names or wildcards (`loan.*`); every event when omitted. */
  events?: EventFilters;
  /** The relay's port on 127.0.0.1 (default a free one). */
  port?: number;
  /** One line per event, and the relay's own lines (default standard output). */
  log?: (line: string) => void;
  /** How long the local receiver has to answer (default 10 s; the API waits 15 s). */
  forwardTimeoutMs?: number;
}

export interface Relay {
  /** The relay's URL, the endpoint's `url`. */
  url: string;
  endpoint: CreatedWebhookEndpoint;
  /** The endpoint's signing secret, for the local receiver to verify with. */
  secret: string;
  /** Deletes the endpoint and stops the relay. */
  close(): Promise<void>;
}

/** Headers that belong to one connection, not to the delivery. */
const hopByHop = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'expect',
]);

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function describe(body: Buffer): { type: string; id: string } {
  try {
    const event = JSON.parse(body.toString('utf8')) as { type?: unknown; id?: unknown };
    return {
      type: typeof event.type === 'string' ? event.type : '?',
      id: typeof event.id === 'string' ? event.id : '?',
    };
  } catch {
    return { type: '(not JSON)', id: '-' };
  }
}

export async function listen(options: ListenOptions): Promise<Relay> {
  const log = options.log ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const timeoutMs = options.forwardTimeoutMs ?? 10_000;
  const target = new URL(options.forwardTo).toString();

  const server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      const { type, id } = describe(body);
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers))
        if (value !== undefined && !hopByHop.has(name))
          headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      let status: number;
      let outcome: string;
      try {
        const answer = await fetch(target, {
          method: request.method ?? 'POST',
          headers,
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(timeoutMs),
        });
        await answer.body?.cancel();
        status = answer.status;
        outcome = String(answer.status);
      } catch (error) {
        // The API records the failure and retries on its schedule, as for any receiver.
        status = 502;
        outcome = `failed (${error instanceof Error ? error.message : String(error)})`;
      }
      log(`${new Date().toISOString()}  ${type}  ${id}  -> ${outcome}`);
      response.writeHead(status).end();
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/webhooks`;
  const stopServer = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });

  let endpoint: CreatedWebhookEndpoint;
  try {
    endpoint = await options.client.webhookEndpoints.create({
      url,
      ...(options.events ? { events: options.events } : {}),
      description: `embedded-credit listen → ${target}`,
    });
  } catch (error) {
    await stopServer();
    throw error;
  }

  let closed: Promise<void> | undefined;
  return {
    url,
    endpoint,
    secret: endpoint.secret,
    close() {
      closed ??= (async () => {
        try {
          await options.client.webhookEndpoints.delete(endpoint.id);
        } finally {
          await stopServer();
        }
      })();
      return closed;
    },
  };
}
