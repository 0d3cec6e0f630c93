import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import type { ClockAdvanceInput } from '../../workflows/sandbox-clock/messages.js';
import { sandboxClockWorkflow } from '../../workflows/index.js';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: inject('testServerExecutable') },
  });
});
afterAll(async () => {
  await env?.teardown();
});

describe('sandbox clock workflow', () => {
  it('keeps asking a waiter that never answers, each run’s history bounded, and is ready once it is gone', async () => {
    const rounds: number[] = [];
    let silent = true;
    const activities: Pick<Activities, 'tellWaitingWorkflows' | 'markClockReady'> = {
      // A loan's workflow that never answers (stuck, or gone as the message arrived), until the
      // records stop listing it.
      async tellWaitingWorkflows(input) {
        rounds.push(input.round);
        return Promise.resolve({ told: silent ? ['loan/ln_silent'] : [], starting: 0 });
      },
      async markClockReady() {
        return Promise.resolve(true);
      },
    };
    const taskQueue = `clock-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      activities,
    });
    const customerId = `cust_${randomUUID().replaceAll('-', '')}`;
    const input: ClockAdvanceInput = {
      customerId,
      partnerId: 'ptn_test',
      environment: 'sandbox',
      offsetMs: 86_400_000,
      generation: 1,
      historyLimit: 40,
    };
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(sandboxClockWorkflow, {
        workflowId: `sandbox-clock/${customerId}/1`,
        taskQueue,
        args: [input],
      });
      // Each round waits 30 s for answers: an hour of skipped time is 120 rounds.
      await env.sleep(3_600_000);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      silent = false;
      expect(await handle.result()).toBe('ready');

      // The rounds went on, numbered across runs, and no run's history grew past the limit.
      expect(rounds.length).toBeGreaterThan(100);
      expect(rounds).toEqual(rounds.map((_, index) => index + 1));
      const sizes: number[] = [];
      let runId: string | null | undefined = (await handle.describe()).runId;
      while (runId) {
        const history = await env.client.workflow
          .getHandle(handle.workflowId, runId)
          .fetchHistory();
        sizes.push(history.events?.length ?? 0);
        runId =
          history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
      }
      expect(sizes.length).toBeGreaterThan(10);
      expect(Math.max(...sizes)).toBeLessThan(60);
    });
  });
});
