import { randomUUID } from 'node:crypto';
import { activityInfo } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { timeSkippingEnvironment } from '../helpers/time-skipping.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import { smokeCheckWorkflow } from '../../workflows/index.js';
import { recordHistory } from '../helpers/histories.js';

const THIRTY_DAYS_MS = 30 * 24 * 60 * 60 * 1000;

describe('smokeCheckWorkflow (time-skipping)', () => {
  let env: TestWorkflowEnvironment;

  beforeAll(async () => {
    env = await timeSkippingEnvironment();
  });

  afterAll(async () => {
    await env?.teardown();
  });

  it('waits on a 30-day durable timer, then records the completion', async () => {
    const taskQueue = `smoke-${randomUUID()}`;
    const completions: { smokeCheckId: string; scheduledAt: number }[] = [];
    const activities: Pick<Activities, 'recordSmokeCheckCompletion'> = {
      async recordSmokeCheckCompletion(input) {
        completions.push({ ...input, scheduledAt: activityInfo().scheduledTimestampMs });
        await Promise.resolve();
      },
    };
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      activities,
    });

    const startedAt = await env.currentTimeMs();
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(smokeCheckWorkflow, {
        workflowId: `smoke-check/smk_${randomUUID().replaceAll('-', '')}`,
        taskQueue,
        args: [{ smokeCheckId: 'smk_0123456789abcdef0123456789abcdef', delayMs: THIRTY_DAYS_MS }],
      });
      await handle.result();
      await recordHistory(handle, 'smoke-check', 'completed-after-30-day-timer');
    });

    expect(completions).toHaveLength(1);
    expect(completions[0]?.smokeCheckId).toBe('smk_0123456789abcdef0123456789abcdef');
    // The activity ran only after the timer: 30 days of server time passed before it was scheduled.
    expect(completions[0]!.scheduledAt - startedAt).toBeGreaterThanOrEqual(THIRTY_DAYS_MS);
    expect((await env.currentTimeMs()) - startedAt).toBeGreaterThanOrEqual(THIRTY_DAYS_MS);
  });
});
