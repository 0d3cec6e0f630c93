import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { timeSkippingEnvironment } from '../helpers/time-skipping.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import { decideUpdate } from '../../workflows/approval/messages.js';
import { approvalWorkflow } from '../../workflows/index.js';
import { recordHistory } from '../helpers/histories.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** What the activity accepts as the API's proof in these tests. */
const PROOF = 'proof-by-the-api';

describe('approvalWorkflow (time-skipping)', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await timeSkippingEnvironment();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  /** Runs one approval with activities that record what they were asked. */
  async function withApproval(
    body: (run: {
      handle: Awaited<ReturnType<typeof env.client.workflow.start<typeof approvalWorkflow>>>;
      calls: string[];
    }) => Promise<void>,
  ) {
    const taskQueue = `approval-${randomUUID()}`;
    const calls: string[] = [];
    const activities: Pick<Activities, 'executeApproval' | 'closeApproval' | 'verifyDecision'> = {
      // The worker's check of the API's proof (an HMAC it alone can verify), stood in for here.
      async verifyDecision({ checkerId, proof }) {
        calls.push(`verify ${checkerId}`);
        return Promise.resolve(proof === PROOF);
      },
      async executeApproval({ checkerId }) {
        calls.push(`execute by ${checkerId}`);
        return Promise.resolve('approved');
      },
      async closeApproval({ status, checkerId }) {
        calls.push(`close ${status}${checkerId ? ` by ${checkerId}` : ''}`);
        await Promise.resolve();
      },
    };
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      activities,
    });
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(approvalWorkflow, {
        workflowId: `approval/apr_${randomUUID().replaceAll('-', '')}`,
        taskQueue,
        args: [
          {
            approvalId: 'apr_0123456789abcdef0123456789abcdef',
            makerId: 'op_maker',
            expiresAt: (await env.currentTimeMs()) + DAY_MS,
          },
        ],
      });
      await body({ handle, calls });
    });
  }

  const refusalOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
      return 'accepted';
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError)
        return (error.cause as { type?: string }).type;
      throw error;
    }
  };

  it('runs the command once another operator approves; the maker is refused', async () => {
    await withApproval(async ({ handle, calls }) => {
      const decide = (checkerId: string) =>
        handle.executeUpdate(decideUpdate, {
          args: [{ decision: 'approve', checkerId, proof: PROOF }],
        });
      expect(await refusalOf(decide('op_maker'))).toBe('approval_by_maker');
      expect(await decide('op_checker')).toEqual({ status: 'approved' });
      expect(await handle.result()).toBe('approved');
      expect(calls).toEqual(['verify op_checker', 'execute by op_checker']);
      await recordHistory(handle, 'approval', 'approved-after-maker-refused');
    });
  });

  it('never runs a rejected one', async () => {
    await withApproval(async ({ handle, calls }) => {
      await handle.executeUpdate(decideUpdate, {
        args: [
          { decision: 'reject', checkerId: 'op_checker', reason: 'no such Pix', proof: PROOF },
        ],
      });
      expect(await handle.result()).toBe('rejected');
      expect(calls).toEqual(['verify op_checker', 'close rejected by op_checker']);
      await recordHistory(handle, 'approval', 'rejected');
    });
  });

  it('refuses a decision the API did not prove, running nothing, and still takes a proven one (issue 37)', async () => {
    await withApproval(async ({ handle, calls }) => {
      const forged = (proof?: string) =>
        handle.executeUpdate(decideUpdate, {
          args: [
            {
              decision: 'approve',
              checkerId: 'op_00000000000000000000000000000000',
              ...(proof === undefined ? {} : { proof }),
            },
          ],
        });
      expect(await refusalOf(forged())).toBe('decision_unproven');
      expect(await refusalOf(forged('k1.bm90LWEtbWFj'))).toBe('decision_unproven');
      // Nothing ran, and the approval still waits for a real decision.
      expect(calls).toEqual([
        'verify op_00000000000000000000000000000000',
        'verify op_00000000000000000000000000000000',
      ]);
      expect(
        await handle.executeUpdate(decideUpdate, {
          args: [{ decision: 'approve', checkerId: 'op_checker', proof: PROOF }],
        }),
      ).toEqual({ status: 'approved' });
      expect(await handle.result()).toBe('approved');
      expect(calls.slice(2)).toEqual(['verify op_checker', 'execute by op_checker']);
      await recordHistory(handle, 'approval', 'approved-after-forged-decisions-refused');
    });
  });

  it('expires after its time with nobody deciding', async () => {
    await withApproval(async ({ handle, calls }) => {
      expect(await handle.result()).toBe('expired');
      expect(calls).toEqual(['close expired']);
      await recordHistory(handle, 'approval', 'expired-after-a-day');
    });
  });
});
