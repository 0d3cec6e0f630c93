import { findEvent } from '../src/db/queries/events.js';
import {
  cancelPendingDeliveries,
  endDelivery,
  findDelivery,
  recordAttempt,
  scheduleNextAttempt,
  settleEndpointStreak,
} from '../src/db/queries/webhook-deliveries.js';
import {
  adjustSendRate,
  findEndpoint,
  reserveSendSlot,
  updateEndpoint,
} from '../src/db/queries/webhook-endpoints.js';
import {
  classifyResponse,
  slowDownStatuses,
  type AttemptOutcome,
} from '../src/domain/webhooks/schedule.js';
import { presentEvent } from '../src/presenters/events.js';
import { postWebhook } from '../src/webhooks/sender.js';
import { signatureHeader } from '../src/webhooks/signature.js';
import type { DeliveryWorkflowInput } from '../workflows/webhook-delivery/messages.js';
import type { ActivityDeps } from './index.js';

/** Five events in a row ending `failed`, with no success between, disable the endpoint. */
export const FAILED_EVENTS_BEFORE_DISABLE = 5;

export interface AttemptResult {
  outcome: AttemptOutcome;
  /** One line for the workflow's details in the Temporal UI. */
  summary: string;
}

export function createWebhookActivities(deps: ActivityDeps) {
  const tenantOf = (ref: DeliveryWorkflowInput) => ({
    partnerId: ref.partnerId,
    environment: ref.environment,
  });

  return {
    /** Takes the endpoint's next send slot; the workflow waits this long (a durable timer) first. */
    async reserveDeliverySlot(input: DeliveryWorkflowInput): Promise<number> {
      return reserveSendSlot(deps.db, tenantOf(input), input.endpointId);
    },

    /** When the next attempt is due, for partners reading the delivery (the workflow decided it). */
    async scheduleDeliveryAttempt(input: DeliveryWorkflowInput & { at: string }): Promise<void> {
      await scheduleNextAttempt(deps.db, tenantOf(input), input.deliveryId, new Date(input.at));
    },

    /**
     * One HTTP attempt (never retried by Temporal: the schedule is the workflow's). Signs with
     * every secret valid now, sends the event's stored bytes, records the attempt, and says how the
     * receiver answered; the workflow decides what follows.
     */
    async attemptDelivery(
      input: DeliveryWorkflowInput & { attempt: number },
    ): Promise<AttemptResult> {
      const tenant = tenantOf(input);
      const cancelled = (why: string): AttemptResult => ({
        outcome: { kind: 'cancelled' },
        summary: why,
      });
      const delivery = await findDelivery(deps.db, tenant, input.deliveryId);
      if (!delivery || delivery.status !== 'pending')
        return cancelled(`delivery is ${delivery?.status ?? 'gone'}`);
      const endpoint = await findEndpoint(deps.db, tenant, input.endpointId);
      if (!endpoint || endpoint.status !== 'enabled') {
        await endDelivery(deps.db, tenant, input.deliveryId, 'cancelled');
        return cancelled(
          endpoint
            ? `endpoint disabled (${endpoint.disabledReason ?? 'manual'})`
            : 'endpoint deleted',
        );
      }
      const event = await findEvent(deps.db, tenant, input.eventId);
      if (!event) return cancelled('event not found');

      const now = new Date();
      const secrets = [deps.webhooks.sealedBox.open(endpoint.secretSealed)];
      if (
        endpoint.previousSecretSealed &&
        endpoint.previousSecretExpiresAt &&
        endpoint.previousSecretExpiresAt > now
      ) {
        secrets.push(deps.webhooks.sealedBox.open(endpoint.previousSecretSealed));
      }
      // The stored event, serialized the same way every time: every attempt sends the same bytes.
      const body = JSON.stringify(presentEvent(event));
      const timestamp = Math.floor(now.getTime() / 1000);
      const sent = await postWebhook({
        url: endpoint.url,
        body,
        headers: {
          'webhook-id': event.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader({ id: event.id, timestamp, body, secrets }),
        },
        allowPrivate: deps.webhooks.allowPrivateTargets,
        allowedPorts: deps.webhooks.allowedPorts,
        allowLoopbackHttp: deps.webhooks.allowLoopbackHttp ?? false,
        ...(deps.webhooks.ca ? { ca: deps.webhooks.ca } : {}),
      });

      const outcome: AttemptOutcome =
        sent.status === null
          ? { kind: 'retry' }
          : classifyResponse(sent.status, sent.retryAfter, Date.now());
      if (sent.status !== null && slowDownStatuses.has(sent.status)) {
        await adjustSendRate(deps.db, tenant, input.endpointId, 'slow_down');
      } else if (outcome.kind === 'succeeded') {
        await adjustSendRate(deps.db, tenant, input.endpointId, 'success');
      }
      await recordAttempt(deps.db, tenant, input.deliveryId, {
        number: input.attempt,
        started_at: now.toISOString(),
        response_status: sent.status,
        error: sent.error,
        duration_ms: sent.durationMs,
      });
      const answer = sent.status === null ? sent.error : `HTTP ${sent.status}`;
      return {
        outcome,
        summary: `attempt ${input.attempt}: ${answer} in ${sent.durationMs} ms`,
      };
    },

    /**
     * Ends a delivery and applies what follows, once: success resets the endpoint's failure
     * streak; failure lengthens it (five disable the endpoint); 410 disables it as gone and
     * cancels its pending deliveries.
     */
    async finishDelivery(
      input: DeliveryWorkflowInput & { outcome: 'succeeded' | 'failed' | 'gone' },
    ): Promise<void> {
      const tenant = tenantOf(input);
      await deps.db.transaction(async (tx) => {
        if (input.outcome === 'gone') {
          await updateEndpoint(tx, tenant, input.endpointId, {
            status: 'disabled',
            disabledReason: 'gone',
          });
          await cancelPendingDeliveries(tx, tenant, input.endpointId);
          return;
        }
        if (!(await endDelivery(tx, tenant, input.deliveryId, input.outcome))) return;
        const { disabled } = await settleEndpointStreak(
          tx,
          tenant,
          input.endpointId,
          input.outcome,
          FAILED_EVENTS_BEFORE_DISABLE,
        );
        if (disabled) await cancelPendingDeliveries(tx, tenant, input.endpointId);
      });
    },
  };
}
