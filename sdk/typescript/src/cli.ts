/**
 * `embedded-credit listen --forward-to http://localhost:4000/hook`: relays the sandbox's webhooks
 * to a local URL until Ctrl-C, then deletes the endpoint it created. Credentials come from the
 * flags or EMBEDDED_CREDIT_CLIENT_ID, EMBEDDED_CREDIT_CLIENT_SECRET and EMBEDDED_CREDIT_API_URL.
 */
import { parseArgs } from 'node:util';
import { createClient } from './client.js';
import { listen } from './listen.js';

const usage = `Usage: embedded-credit listen --forward-to <url> [options]

Relays the sandbox's webhooks to a local URL, one line per event, until Ctrl-C.

  --forward-to <url>      where each delivery is sent (required)
  --events <list>         comma-separated event names or wildcards (loan.*); default every event
  --port <n>              the relay's port on 127.0.0.1 (default a free one)
  --api-url <url>         default EMBEDDED_CREDIT_API_URL, else http://localhost:3000
  --client-id <id>        default EMBEDDED_CREDIT_CLIENT_ID
  --client-secret <s>     default EMBEDDED_CREDIT_CLIENT_SECRET
`;

const out = (line: string) => void process.stdout.write(`${line}\n`);
const fail = (message: string): never => {
  process.stderr.write(`${message}\n`);
  process.exit(2);
};

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    'forward-to': { type: 'string' },
    events: { type: 'string' },
    port: { type: 'string' },
    'api-url': { type: 'string' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help || positionals[0] !== 'listen') fail(usage);
const forwardTo = values['forward-to'] ?? fail(`--forward-to is required\n\n${usage}`);

let client: ReturnType<typeof createClient>;
try {
  client = createClient({
    ...(values['api-url'] ? { baseUrl: values['api-url'] } : {}),
    ...(values['client-id'] ? { clientId: values['client-id'] } : {}),
    ...(values['client-secret'] ? { clientSecret: values['client-secret'] } : {}),
  });
} catch (error) {
  fail((error as Error).message);
}
const relay = await listen({
  client: client!,
  forwardTo,
  ...(values.events
    ? { events: values.events.split(',').map((name) => name.trim()) as never }
    : {}),
  ...(values.port ? { port: Number(values.port) } : {}),
}).catch((error: unknown) => fail(`listen: ${(error as Error).message}`));

out(`Ready: endpoint ${relay.endpoint.id} delivers to ${relay.url}, forwarded to ${forwardTo}`);
out(`Webhook signing secret: ${relay.secret}`);
out('Ctrl-C to stop (the endpoint is deleted).');

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  relay.close().then(
    () => {
      out(`${signal}: endpoint ${relay.endpoint.id} deleted`);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`could not delete endpoint ${relay.endpoint.id}: ${String(error)}\n`);
      process.exit(1);
    },
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
