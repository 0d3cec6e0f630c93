import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { timeSkippingEnvironment } from '../helpers/time-skipping.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import { customerErasureWorkflow, deniedDocumentsWorkflow } from '../../workflows/index.js';
import { recordHistory } from '../helpers/histories.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const CUSTOMER = 'cust_0123456789abcdef0123456789abcdef';

type DataActivities = Pick<
  Activities,
  | 'endCustomerWorkflows'
  | 'deleteFiles'
  | 'markErasureFilesDeleted'
  | 'eraseRetainedRecords'
  | 'completeErasure'
  | 'deleteDeniedDocuments'
>;

describe('customer data workflows (time-skipping)', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await timeSkippingEnvironment();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  /** Runs `body` with activities that log each call with the workflow clock's time (days). */
  async function withActivities(body: (taskQueue: string, calls: string[]) => Promise<void>) {
    const taskQueue = `customer-data-${randomUUID()}`;
    const calls: string[] = [];
    const start = await env.currentTimeMs();
    const day = async () => Math.round(((await env.currentTimeMs()) - start) / DAY_MS);
    const note = async (call: string) => {
      calls.push(`day ${await day()}: ${call}`);
    };
    const activities: DataActivities = {
      async endCustomerWorkflows() {
        await note('end workflows');
        return [];
      },
      async deleteFiles({ keys }) {
        await note(`delete ${keys.join(', ')}`);
      },
      async markErasureFilesDeleted() {
        await note('files deleted');
      },
      async eraseRetainedRecords() {
        await note('erase retained records');
        return { fileKeys: ['contracts/ln_1.pdf'] };
      },
      async completeErasure() {
        await note('complete');
      },
      async deleteDeniedDocuments() {
        await note('delete denied documents');
        return 2;
      },
    };
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      activities,
    });
    await worker.runUntil(body(taskQueue, calls));
  }

  it('erases files at once and what the law kept when its period ends', async () => {
    await withActivities(async (taskQueue, calls) => {
      const handle = await env.client.workflow.start(customerErasureWorkflow, {
        workflowId: `customer-erasure/${CUSTOMER}`,
        taskQueue,
        args: [
          {
            customerId: CUSTOMER,
            partnerId: 'ptn_1',
            environment: 'production',
            fileKeys: ['documents/doc_1', 'documents/doc_2'],
            retainedUntil: (await env.currentTimeMs()) + 5 * 365 * DAY_MS,
          },
        ],
      });
      await handle.result();
      expect(calls).toEqual([
        'day 0: end workflows',
        'day 0: delete documents/doc_1, documents/doc_2',
        'day 0: files deleted',
        'day 1825: erase retained records',
        'day 1825: delete contracts/ln_1.pdf',
        'day 1825: complete',
      ]);
      await recordHistory(handle, 'customer-erasure', 'retained-five-years');
    });
  });

  it('ends at once for a customer without loans', async () => {
    await withActivities(async (taskQueue, calls) => {
      const handle = await env.client.workflow.start(customerErasureWorkflow, {
        workflowId: `customer-erasure/${CUSTOMER}-none`,
        taskQueue,
        args: [
          {
            customerId: CUSTOMER,
            partnerId: 'ptn_1',
            environment: 'sandbox',
            fileKeys: [],
            retainedUntil: null,
          },
        ],
      });
      await handle.result();
      expect(calls).toEqual(['day 0: end workflows', 'day 0: delete ', 'day 0: files deleted']);
      await recordHistory(handle, 'customer-erasure', 'nothing-retained');
    });
  });

  it("deletes a denied customer's documents when their period ends", async () => {
    await withActivities(async (taskQueue, calls) => {
      const handle = await env.client.workflow.start(deniedDocumentsWorkflow, {
        workflowId: `denied-documents/${CUSTOMER}`,
        taskQueue,
        args: [{ customerId: CUSTOMER, deleteAt: (await env.currentTimeMs()) + 90 * DAY_MS }],
      });
      await handle.result();
      expect(calls).toEqual(['day 90: delete denied documents']);
      await recordHistory(handle, 'denied-documents', 'deleted-after-ninety-days');
    });
  });
});
