import {
  ActivityFailure,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  sleep,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { Environment } from '../src/domain/environments.js';
import { delayBeforeAttempt, MAX_ATTEMPTS } from '../src/domain/webhooks/schedule.js';

// One HTTP attempt per activity execution: Temporal must not retry it, the schedule below does.
const { attemptDelivery } = proxyActivities<Activities>({
  startToCloseTimeout: '20 seconds', // the 15 s receiver budget, plus the database around it
  retry: { maximumAttempts: 1 },
});
// Short database statements: local activities, run within the workflow task, with no round trip
// through the server's task queues (this is most of a delivery's latency on an idle endpoint).
const { finishDelivery, reserveDeliverySlot } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export interface DeliveryWorkflowInput {
  deliveryId: string;
  eventId: string;
  endpointId: string;
  partnerId: string;
  environment: Environment;
}

/**
 * One delivery of one event to one endpoint: attempts on the spec's schedule (immediate, 5 s,
 * 5 min … 24 h, each from the end of the previous attempt, +0–10 % jitter), then `failed`. The
 * `webhook-id` is the event id on every attempt. An attempt lost with its worker counts as failed
 * and is retried on the schedule — the receiver deduplicates by `webhook-id`.
 */
export async function webhookDeliveryWorkflow(input: DeliveryWorkflowInput): Promise<string> {
  const history: string[] = [];
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    // The endpoint's send rate (halved by 429/502/504) decides when this attempt may go.
    const waitMs = await reserveDeliverySlot(input);
    if (waitMs > 0) await sleep(waitMs);
    // Drawn in the workflow: replay-safe, so the jitter is the same on every replay.
    const random = Math.random();
    let nextDelayMs: number | null;
    try {
      const result = await attemptDelivery({ ...input, attempt, random });
      history.push(result.summary);
      setCurrentDetails(history.join('\n\n'));
      if (result.outcome.kind === 'cancelled') return 'cancelled';
      if (result.outcome.kind === 'succeeded' || result.outcome.kind === 'gone') {
        await finishDelivery({ ...input, outcome: result.outcome.kind });
        return result.outcome.kind;
      }
      nextDelayMs = result.nextDelayMs;
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      history.push(`attempt ${attempt}: lost (${error.cause?.message ?? error.message})`);
      setCurrentDetails(history.join('\n\n'));
      nextDelayMs = attempt < MAX_ATTEMPTS ? delayBeforeAttempt(attempt + 1, random) : null;
    }
    if (nextDelayMs === null) break;
    await sleep(nextDelayMs);
  }
  await finishDelivery({ ...input, outcome: 'failed' });
  return 'failed';
}
