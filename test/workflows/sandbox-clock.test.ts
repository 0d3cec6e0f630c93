import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { timeSkippingEnvironment } from '../helpers/time-skipping.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import {
  clockSettledSignal,
  type ClockAdvanceInput,
} from '../../workflows/sandbox-clock/messages.js';
import { sandboxClockWorkflow } from '../../workflows/index.js';
import { recordHistory, runsOf } from '../helpers/histories.js';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
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
      const sizes = (await runsOf(env.client.workflow, handle.workflowId)).map((run) => run.events);
      expect(sizes.length).toBeGreaterThan(10);
      expect(Math.max(...sizes)).toBeLessThan(60);
      const run = (runId?: string) => env.client.workflow.getHandle(handle.workflowId, runId);
      await recordHistory(
        run(handle.firstExecutionRunId),
        'sandbox-clock',
        'silent-waiter-first-run-continued-as-new',
      );
      await recordHistory(run(), 'sandbox-clock', 'silent-waiter-last-run-ready');
    });
  });

  it('waits for a workflow still starting and asks a busy one again; a later advance supersedes it', async () => {
    const rounds: { round: number; told: string[]; starting: number }[] = [];
    const activities: Pick<Activities, 'tellWaitingWorkflows' | 'markClockReady'> = {
      // Round 1: a loan's workflow answers busy while an offer's start is still in the outbox;
      // round 2: both answer idle.
      async tellWaitingWorkflows(input) {
        const told = input.round === 1 ? ['loan/ln_1'] : ['loan/ln_1', 'credit-offers/cust_1'];
        const starting = input.round === 1 ? 1 : 0;
        rounds.push({ round: input.round, told, starting });
        const advance = env.client.workflow.getHandle(input.advance);
        for (const workflowId of told)
          await advance.signal(clockSettledSignal, {
            workflowId,
            offsetMs: input.offsetMs,
            round: input.round,
            busy: input.round === 1,
          });
        return { told, starting };
      },
      // A later advance wrote a newer generation: this one does not mark the clock ready.
      async markClockReady() {
        return Promise.resolve(false);
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
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(sandboxClockWorkflow, {
        workflowId: `sandbox-clock/${customerId}/1`,
        taskQueue,
        args: [
          {
            customerId,
            partnerId: 'ptn_test',
            environment: 'sandbox',
            offsetMs: 86_400_000,
            generation: 1,
          } satisfies ClockAdvanceInput,
        ],
      });
      expect(await handle.result()).toBe('superseded');
      expect(rounds.map((r) => r.round)).toEqual([1, 2]);
      await recordHistory(handle, 'sandbox-clock', 'start-waited-busy-answer-then-superseded');
    });
  });
});
