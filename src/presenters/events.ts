import type { Actor } from '../domain/operators.js';
import type { Event } from '../db/queries/events.js';

/** An event as partners see it, through `GET /v3/events` and as every webhook delivery's body. */
export interface PublicEvent {
  id: string;
  type: string;
  /** RFC 3339; the `webhook-timestamp` header is the attempt's time in Unix seconds. */
  timestamp: string;
  data: Record<string, unknown>;
  /** Who caused it, when the service recorded one (an operator's command); absent otherwise. */
  actor?: Actor;
}

/**
 * The one public shape of an event. Deliveries serialize it from the stored row the same way on
 * every attempt, so a retry or a resend sends the same bytes.
 */
export function presentEvent(event: Event): PublicEvent {
  return {
    id: event.id,
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    data: event.data,
    // Only when recorded: an event written before actors were kept serializes as it always did.
    ...(event.actor ? { actor: event.actor } : {}),
  };
}
