import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smokeChecks, workflowOutbox } from '../../src/db/schema/index.js';
import { recordHistory } from '../helpers/histories.js';
import { eventually, OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

const headers = { Authorization: `Bearer ${OPS_TOKEN}`, 'Content-Type': 'application/json' };

interface SmokeCheckBody {
  id: string;
  status: 'pending' | 'completed';
  workflow_id: string;
  completed_by: string | null;
  completed_at: string | null;
}

describe('a smoke check through the real API, worker, PostgreSQL and Temporal', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('writes the row, starts the workflow, lets the activity complete it, and reads it back', async () => {
    const created = await fetch(`${stack.baseUrl}/ops/v1/smoke-checks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ delay: '1s' }),
    });
    expect(created.status).toBe(202);
    const check = (await created.json()) as SmokeCheckBody;
    expect(check).toMatchObject({
      status: 'pending',
      completed_by: null,
      workflow_id: `smoke-check/${check.id}`,
    });
    expect(created.headers.get('location')).toBe(`/ops/v1/smoke-checks/${check.id}`);

    // The row exists as soon as the API answers.
    const row = await stack.database.db.query.smokeChecks.findFirst({
      where: eq(smokeChecks.id, check.id),
    });
    expect(row?.status).toBe('pending');

    const completed = await eventually(async () => {
      const response = await fetch(`${stack.baseUrl}${created.headers.get('location')}`, {
        headers,
      });
      const body = (await response.json()) as SmokeCheckBody;
      return body.status === 'completed' ? body : undefined;
    }, 'the smoke check to complete');
    expect(completed.completed_by).toMatch(/^\d+@/);
    expect(Date.parse(completed.completed_at!)).toBeGreaterThan(
      Date.parse(row!.createdAt.toISOString()),
    );

    // The row is written by the workflow's last activity; the workflow closes a moment later.
    const handle = stack.temporal.workflow.getHandle(check.workflow_id);
    await handle.result();
    await recordHistory(handle, 'smoke-check', 'completed');
    const description = await handle.describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(description.type).toBe('smokeCheckWorkflow');
  });
});

describe('when Temporal is unreachable at request time', () => {
  it('still accepts the check, and the worker’s sweeper starts the workflow later', async () => {
    const worker = await startStack();
    const api = await startStack({
      worker: false,
      apiTemporalAddress: '127.0.0.1:1',
      taskQueue: worker.config.temporal.taskQueue,
    });
    try {
      const created = await fetch(`${api.baseUrl}/ops/v1/smoke-checks`, {
        method: 'POST',
        headers,
        body: '{}',
      });
      expect(created.status).toBe(202);
      const check = (await created.json()) as SmokeCheckBody;

      const completed = await eventually(async () => {
        const response = await fetch(`${api.baseUrl}/ops/v1/smoke-checks/${check.id}`, { headers });
        const body = (await response.json()) as SmokeCheckBody;
        return body.status === 'completed' ? body : undefined;
      }, 'the swept smoke check to complete');
      expect(completed.id).toBe(check.id);

      // The sweeper marks the row started once the start returns: the workflow may finish first.
      const outbox = await eventually(async () => {
        const row = await worker.database.db.query.workflowOutbox.findFirst({
          where: eq(workflowOutbox.workflowId, check.workflow_id),
        });
        return row?.startedAt ? row : undefined;
      }, 'the outbox row marked started');
      expect(outbox.lastError).toBeTruthy(); // the first start really failed
      expect(outbox.startedAt).toBeInstanceOf(Date);
    } finally {
      await api.stop();
      await worker.stop();
    }
  });
});
