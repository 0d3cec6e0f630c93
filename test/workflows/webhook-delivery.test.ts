import { randomUUID } from 'node:crypto';
import { activityInfo, ApplicationFailure } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { timeSkippingEnvironment } from '../helpers/time-skipping.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import type { AttemptResult } from '../../activities/webhooks.js';
import { RETRY_DELAYS_MS } from '../../src/domain/webhooks/schedule.js';
import { webhookDeliveryWorkflow } from '../../workflows/index.js';
import { recordHistory } from '../helpers/histories.js';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
});
afterAll(async () => {
  await env?.teardown();
});

/**
 * A receiver scripted attempt by attempt; records when each attempt was scheduled (server time).
 * The delivery's history is saved for the replay test as `caseName`.
 */
async function deliver(answers: (AttemptResult['outcome'] | 'lost')[], caseName: string) {
  const attempts: { number: number; at: number }[] = [];
  /** When the workflow said each next attempt is due (what partners read as `next_attempt_at`). */
  const scheduled: number[] = [];
  const finished: string[] = [];
  const activities: Pick<
    Activities,
    'attemptDelivery' | 'finishDelivery' | 'reserveDeliverySlot' | 'scheduleDeliveryAttempt'
  > = {
    async reserveDeliverySlot() {
      return 0;
    },
    async attemptDelivery(input) {
      attempts.push({ number: input.attempt, at: activityInfo().scheduledTimestampMs });
      const outcome = answers[input.attempt - 1] ?? { kind: 'retry' };
      if (outcome === 'lost') throw ApplicationFailure.nonRetryable('worker lost', 'lost');
      return { outcome, summary: `attempt ${input.attempt}` };
    },
    async scheduleDeliveryAttempt(input) {
      scheduled.push(Date.parse(input.at));
    },
    async finishDelivery(input) {
      finished.push(input.outcome);
    },
  };
  const taskQueue = `delivery-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities,
  });
  const result = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start(webhookDeliveryWorkflow, {
      workflowId: `webhook-delivery/whd_${randomUUID().replaceAll('-', '')}`,
      taskQueue,
      args: [
        {
          deliveryId: 'whd_1',
          eventId: 'evt_1',
          endpointId: 'we_1',
          partnerId: 'ptn_1',
          environment: 'sandbox',
        },
      ],
    });
    const outcome = await handle.result();
    await recordHistory(handle, 'webhook-delivery', caseName);
    return outcome;
  });
  return { result, attempts, scheduled, finished };
}

describe('webhookDeliveryWorkflow (time-skipping)', () => {
  it('makes 10 attempts on the schedule, each gap within its jitter window, then fails', async () => {
    const { result, attempts, scheduled, finished } = await deliver(
      [],
      'failed-after-every-attempt',
    );
    expect(result).toBe('failed');
    // Each next attempt was announced for when it then happened (to the timer's step).
    expect(scheduled).toHaveLength(9);
    scheduled.forEach((at, i) => expect(Math.abs(attempts[i + 1]!.at - at)).toBeLessThan(1_000));
    expect(finished).toEqual(['failed']);
    expect(attempts.map((a) => a.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (let i = 1; i < attempts.length; i++) {
      const gap = attempts[i]!.at - attempts[i - 1]!.at;
      const base = RETRY_DELAYS_MS[i]!;
      expect({ attempt: i + 1, early: gap < base }).toEqual({ attempt: i + 1, early: false });
      // An attempt takes a moment itself; the delay is counted from its end.
      expect(gap).toBeLessThanOrEqual(Math.round(base * 1.1) + 2_000);
    }
    const total = attempts.at(-1)!.at - attempts[0]!.at;
    expect(total / 3_600_000).toBeGreaterThan(72); // about three days
  });

  it('stops at the first success', async () => {
    const { result, attempts, finished } = await deliver(
      [{ kind: 'retry' }, { kind: 'retry' }, { kind: 'succeeded' }],
      'retried-then-delivered',
    );
    expect(result).toBe('succeeded');
    expect(attempts).toHaveLength(3);
    expect(finished).toEqual(['succeeded']);
  });

  it('stops at 410 and reports the endpoint gone', async () => {
    const { result, finished, attempts } = await deliver([{ kind: 'gone' }], 'endpoint-gone');
    expect(result).toBe('gone');
    expect(finished).toEqual(['gone']);
    expect(attempts).toHaveLength(1);
  });

  it('waits at least Retry-After before the next attempt', async () => {
    const { attempts } = await deliver(
      [{ kind: 'retry', retryAfterMs: 120_000 }, { kind: 'succeeded' }],
      'retry-after-then-delivered',
    );
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(120_000);
  });

  it('counts an attempt lost with its worker as failed, and retries it on the schedule', async () => {
    const { result, attempts } = await deliver(
      ['lost', { kind: 'succeeded' }],
      'attempt-lost-then-delivered',
    );
    expect(result).toBe('succeeded');
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(5_000);
  });

  it('ends quietly when the delivery was cancelled', async () => {
    const { result, finished } = await deliver([{ kind: 'cancelled' }], 'delivery-cancelled');
    expect(result).toBe('cancelled');
    expect(finished).toEqual([]);
  });
});
