import {
  ActivityFailure,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  sleep,
} from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { delayBeforeAttempt, MAX_ATTEMPTS } from '../../src/domain/webhooks/schedule.js';
import { localDatabaseWrite, webhookAttempt } from '../presets.js';
import type { DeliveryWorkflowInput } from './messages.js';

const { attemptDelivery } = proxyActivities<Activities>(webhookAttempt);
const { finishDelivery, reserveDeliverySlot, scheduleDeliveryAttempt } =
  proxyLocalActivities<Activities>(localDatabaseWrite);

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
    let retryAfterMs: number | undefined;
    try {
      const result = await attemptDelivery({ ...input, attempt });
      history.push(result.summary);
      setCurrentDetails(history.join('\n\n'));
      if (result.outcome.kind === 'cancelled') return 'cancelled';
      if (result.outcome.kind === 'succeeded' || result.outcome.kind === 'gone') {
        await finishDelivery({ ...input, outcome: result.outcome.kind });
        return result.outcome.kind;
      }
      retryAfterMs = result.outcome.retryAfterMs;
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      history.push(`attempt ${attempt}: lost (${error.cause?.message ?? error.message})`);
      setCurrentDetails(history.join('\n\n'));
    }
    if (attempt === MAX_ATTEMPTS) break;
    // The schedule is decided here, once: from the end of this attempt, jittered, never shorter
    // than the receiver's Retry-After.
    const delayMs = delayBeforeAttempt(attempt + 1, random, retryAfterMs);
    await scheduleDeliveryAttempt({ ...input, at: new Date(Date.now() + delayMs).toISOString() });
    await sleep(delayMs);
  }
  await finishDelivery({ ...input, outcome: 'failed' });
  return 'failed';
}
