import { z } from 'zod';
import { eventCatalogue } from '../../../domain/webhooks/catalogue.js';
import { idField, pathId } from '../../ids.js';
import { listEnvelope, listQuery } from '../../list.js';

// A webhook URL as sent (not as a URL parser would repair it: case, spaces, backslashes, missing
// slashes): https, a host, an optional port up to 65535, then any printable ASCII.
const port = '(?::(?:6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|\\d{1,4}))?';
const rest = '(?:[/?#][!-~]*)?';
const label = '[A-Za-z0-9-]+';
/** Any host: a name, a dotted IPv4 address, a bracketed IPv6 one. */
const anyHost = `(?:(?:${label}\\.)*${label}\\.?|\\[[0-9A-Fa-f:.]+\\])`;
/**
 * A host that is a name: its last label starts with a letter (so no parser reads it as an IPv4
 * number, in any of its decimal, octal or hex forms) and is not `localhost`.
 */
const namedHost = `(?:${label}\\.)*(?![Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt]\\.?(?:[:/?#]|$))[A-Za-z][A-Za-z0-9-]*\\.?`;
const urlOf = (host: string, ports = port) => new RegExp(`^https://${host}${ports}${rest}$`);
/** Plain http to this machine's loopback (WEBHOOK_ALLOW_LOOPBACK_HTTP, development only). */
export const loopbackHttpTarget = new RegExp(
  `^http://(?:localhost|127(?:\\.(?:25[0-5]|2[0-4]\\d|1?\\d?\\d)){3}|\\[::1\\])${port}${rest}$`,
);
const anyTarget = urlOf(anyHost);
const namedTarget = urlOf(namedHost);
/** Only these ports, and no port at all when 443 (https's own) is one of them. */
const portsOf = (allowed: readonly number[]) => {
  const list = `:(?:${allowed.join('|')})`;
  return allowed.includes(443) ? `(?:${list})?` : list;
};

/**
 * Where deliveries may go. Outside development (WEBHOOK_ALLOW_PRIVATE_TARGETS) the host must be a
 * name: an address literal or `localhost` is 422 `forbidden_target`, and the document's pattern
 * says so. Names are checked against the address policy at every delivery attempt, where they
 * resolve; with private targets allowed, address literals are checked here (src/webhooks).
 */
function webhookUrl(policy: TargetRules) {
  const { allowPrivateTargets, allowedPorts, allowLoopbackHttp } = policy;
  const loopback = (value: string) => allowLoopbackHttp && loopbackHttpTarget.test(value);
  const syntax = z
    .string()
    .max(2048)
    .refine((value) => anyTarget.test(value) || loopback(value), {
      message: allowLoopbackHttp
        ? 'Must be an https:// URL of printable ASCII characters, or http:// to this machine (localhost, 127.0.0.1, [::1]).'
        : 'Must be an https:// URL (plain HTTP is refused) of printable ASCII characters.',
      params: { code: 'invalid_format' },
      abort: true,
    })
    .pipe(z.url({ protocol: allowLoopbackHttp ? /^https?$/ : /^https$/, error: 'Not a URL.' }));
  const example = 'https://hooks.partner.example/embedded-credit';
  const documented = (pattern: RegExp) =>
    allowLoopbackHttp ? `${pattern.source}|${loopbackHttpTarget.source}` : pattern.source;
  if (allowPrivateTargets)
    return syntax.meta({
      example,
      description: urlText,
      override: { pattern: documented(anyTarget) },
    });
  // Ports (WEBHOOK_ALLOWED_PORTS) are part of the documented pattern, so a URL the document
  // allows is one the API takes.
  const allowedTarget = urlOf(namedHost, portsOf(allowedPorts));
  return syntax
    .meta({ description: urlText })
    .refine((value) => loopback(value) || namedTarget.test(value), {
      message: 'Webhooks must name their host: an IP address or localhost is refused.',
      params: { code: 'forbidden_target' },
      abort: true,
    })
    .refine((value) => loopback(value) || allowedTarget.test(value), {
      message: `Webhooks go to port ${allowedPorts.join(' or ')} only${allowedPorts.includes(443) ? ' (no port means 443)' : ''}.`,
      params: { code: 'forbidden_target' },
    })
    .meta({ example, override: { pattern: documented(allowedTarget) } });
}

/** What decides where webhooks may go (the configuration's WEBHOOK_* rules). */
export interface TargetRules {
  allowPrivateTargets: boolean;
  allowedPorts: readonly number[];
  allowLoopbackHttp: boolean;
}

/** Every event name of the catalogue, and a wildcard per resource (`loan.*`). */
export const eventFilters = [
  ...eventCatalogue,
  ...new Set(eventCatalogue.map((name) => `${name.split('.')[0]}.*`)),
] as [string, ...string[]];

const events = z
  .array(
    z.enum(eventFilters, {
      error: 'Not an event of the catalogue, nor a resource wildcard such as loan.*.',
    }),
  )
  .max(50)
  .meta({
    description:
      'Event names or resource wildcards (`loan.*`); empty or omitted means every event.',
  });

const urlText =
  'Where deliveries are POSTed: https, a host name (no IP address), port 443 or 8443 (http to localhost too under `npm run dev`).';
const descriptionField = z
  .string()
  .max(500)
  .trim()
  .meta({ description: 'Your note about the endpoint.' });
const statusField = z.enum(['enabled', 'disabled']).meta({
  description: '`disabled` stops deliveries (their events wait); `enabled` resumes them.',
});

function endpointBodiesFor(policy: TargetRules) {
  const url = webhookUrl(policy);
  return {
    create: z
      .strictObject({
        url,
        events: events.optional(),
        description: descriptionField.optional(),
      })
      .meta({ id: 'CreateWebhookEndpointRequest' }),
    update: z
      .strictObject({
        url: url.optional(),
        events: events.optional(),
        description: descriptionField.nullable().optional(),
        status: statusField.optional(),
      })
      .refine((body) => Object.values(body).some((value) => value !== undefined), {
        message: 'Send at least one field to change.',
        params: { code: 'nothing_to_change' },
      })
      .meta({ id: 'UpdateWebhookEndpointRequest', minProperties: 1 }),
  };
}

const endpointBodyVariants = new Map<string, ReturnType<typeof endpointBodiesFor>>();
/** The create and update bodies under the configured target policy (built once per policy). */
export function endpointBodies(policy: TargetRules) {
  const key = [
    policy.allowPrivateTargets ? 'any' : policy.allowedPorts.join(','),
    policy.allowLoopbackHttp ? 'loopback-http' : '',
  ].join(' ');
  let bodies = endpointBodyVariants.get(key);
  if (!bodies) {
    bodies = endpointBodiesFor(policy);
    endpointBodyVariants.set(key, bodies);
  }
  return bodies;
}

export const rotateBody = z
  .strictObject({
    expire_current_in: z
      .int()
      .min(0)
      .max(86_400)
      .default(3600)
      .meta({ description: 'Seconds the current secret keeps signing beside the new one.' }),
  })
  .meta({ id: 'RotateWebhookSecretRequest' });

export const endpointSchema = z
  .object({
    id: idField('we'),
    url: z.string().meta({ description: 'Where deliveries are POSTed.' }),
    events: z
      .array(z.enum(eventFilters))
      .meta({ description: 'The event types (or `resource.*`) it receives; empty: every event.' }),
    description: z.string().nullable().meta({ description: 'Your note about the endpoint.' }),
    status: z
      .enum(['enabled', 'disabled'])
      .meta({ description: 'Whether deliveries are being sent.' }),
    disabled_reason: z.enum(['manual', 'gone', 'failing']).nullable().meta({
      description:
        'Why it is disabled: `manual` (you), `gone` (it answered 410), `failing` (five events in a row failed every attempt).',
    }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'WebhookEndpoint' });

export const createdEndpointSchema = endpointSchema
  .extend({
    secret: z.string().meta({ description: '`whsec_` + base64; shown only here and on rotation.' }),
  })
  .meta({ id: 'CreatedWebhookEndpoint' });

export const secretSchema = z
  .object({
    secret: z.string().meta({
      description: 'The new `whsec_` secret; the previous one signs too until its overlap ends.',
    }),
  })
  .meta({ id: 'WebhookSecret' });
export const endpointParams = z.object({ id: pathId('we', 'webhook_endpoint_not_found') });
export const endpointListQuery = listQuery('we', ['created_at']);
export const endpointList = listEnvelope(endpointSchema, 'WebhookEndpointList');
