/**
 * Webhook deliveries are signed by the Standard Webhooks scheme: `webhook-id` (the event's id),
 * `webhook-timestamp` (Unix seconds) and `webhook-signature`, one `v1,<base64 HMAC-SHA256>` of
 * `{id}.{timestamp}.{body}` per secret in force — two while a rotated secret is still honoured.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { Event, EventType, webhooks } from './types.js';

/**
 * The event bodies the document's `webhooks` section declares (one entry per event type), when it
 * has any.
 */
type DeclaredEvents = string extends keyof webhooks
  ? never
  : {
      [K in keyof webhooks]: webhooks[K] extends {
        post: { requestBody?: { content: { 'application/json': infer Body } } };
      }
        ? Body
        : never;
    }[keyof webhooks];

/** Without per-type schemas: the generic `Event`, narrowed by its `type`. */
type GenericEvents = { [T in EventType]: Omit<Event, 'type'> & { type: T } }[EventType];

/**
 * A delivered event: a union discriminated by `type`, whose `data` is typed per event where the
 * document says what it holds. `switch (event.type)` narrows it.
 */
export type WebhookEvent = [DeclaredEvents] extends [never] ? GenericEvents : DeclaredEvents;

/** The event of one type. */
export type WebhookEventOf<T extends WebhookEvent['type']> = Extract<WebhookEvent, { type: T }>;

export { WebhookVerificationError };

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function headerRecord(headers: HeaderBag): Record<string, string> {
  const record: Record<string, string> = {};
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  for (const [name, value] of entries) {
    if (value === undefined) continue;
    record[name.toLowerCase()] = Array.isArray(value) ? value.join(' ') : value;
  }
  return record;
}

/**
 * Checks a delivery and answers its event. `body` is the request's raw body exactly as received
 * (parse it only afterwards); `secrets` is the endpoint's secret, or every secret you hold during
 * a rotation (the old one until the new one is in place). The signature must be one of any of
 * them, and the timestamp within 5 minutes of now; otherwise {@link WebhookVerificationError}.
 */
export function verifyWebhook(
  body: string | Uint8Array,
  headers: HeaderBag,
  secrets: string | readonly string[],
): WebhookEvent {
  const payload = typeof body === 'string' ? body : Buffer.from(body);
  const record = headerRecord(headers);
  const keys = typeof secrets === 'string' ? [secrets] : secrets;
  if (keys.length === 0) throw new WebhookVerificationError('No secret to verify with');
  let failure: unknown;
  for (const secret of keys) {
    try {
      return new Webhook(secret).verify(payload, record) as WebhookEvent;
    } catch (error) {
      failure = error;
    }
  }
  throw failure instanceof WebhookVerificationError
    ? failure
    : new WebhookVerificationError(String(failure));
}
