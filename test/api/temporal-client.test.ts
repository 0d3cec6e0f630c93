import { randomUUID } from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type Server, type Socket } from 'node:net';
import { WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { defineUpdate } from '@temporalio/workflow';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  connectTemporalClient,
  lazyTemporalClient,
  temporalReachable,
} from '../../src/temporal/client.js';
import { updateWithStart } from '../../src/temporal/outbox.js';
import { developmentRing } from '../../src/config.js';

const payloadKeys = developmentRing('TEMPORAL_PAYLOAD_KEYS');

// The API's Temporal client (src/temporal/client.ts) against the suite's Temporal dev server, and
// against a server that accepts connections and never answers.

describe("the API's Temporal client", () => {
  it('starts, signals and reads workflows without entering an AsyncLocalStorage', async () => {
    const run = vi.spyOn(AsyncLocalStorage.prototype, 'run');
    const enterWith = vi.spyOn(AsyncLocalStorage.prototype, 'enterWith');
    const client = await connectTemporalClient({
      address: inject('temporalAddress'),
      namespace: 'default',
      payloadKeys,
    });
    try {
      // No worker polls this queue: the workflow only has to exist, in the client's namespace.
      const handle = await client.workflow.start('neverRuns', {
        workflowId: `temporal-client-${randomUUID()}`,
        taskQueue: `nobody-${randomUUID()}`,
      });
      await handle.signal('poke');
      const description = await handle.describe();
      expect(description.status.name).toBe('RUNNING');
      expect(description.taskQueue).toMatch(/^nobody-/);
      await handle.terminate('test over');
      // An AsyncLocalStorage entered once puts promise hooks on every promise of the process.
      expect(run).not.toHaveBeenCalled();
      expect(enterWith).not.toHaveBeenCalled();
    } finally {
      run.mockRestore();
      enterWith.mockRestore();
      await client.connection.close();
    }
  });

  it('gives up on an Update no worker takes after its 10 s deadline, not a hang', async () => {
    const client = await connectTemporalClient({
      address: inject('temporalAddress'),
      namespace: 'default',
      payloadKeys,
    });
    const workflowId = `temporal-client-${randomUUID()}`;
    try {
      const started = Date.now();
      const update = updateWithStart(
        client,
        // No worker polls this queue: the workflow starts, and its Update is never accepted.
        { workflowId, workflowType: 'neverRuns', taskQueue: `nobody-${randomUUID()}`, args: [] },
        defineUpdate<void>('neverTaken'),
        [],
      );
      await expect(update).rejects.toBeInstanceOf(WorkflowUpdateRPCTimeoutOrCancelledError);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(9_900);
      expect(elapsed).toBeLessThan(15_000);
    } finally {
      await client.workflow
        .getHandle(workflowId)
        .terminate('test over')
        .catch(() => {});
      await client.connection.close();
    }
  });

  describe('against a server that never answers', () => {
    let silent: Server;
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      silent = createServer((socket) => void sockets.add(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });

    it('gives each call its deadline: a readiness check is false after 2 s, not a hang', async () => {
      const { port } = silent.address() as { port: number };
      const client = lazyTemporalClient({
        address: `127.0.0.1:${port}`,
        namespace: 'default',
        payloadKeys,
      });
      try {
        const started = Date.now();
        expect(await temporalReachable(client)).toBe(false);
        const elapsed = Date.now() - started;
        expect(elapsed).toBeGreaterThanOrEqual(1_900);
        expect(elapsed).toBeLessThan(5_000);
      } finally {
        await client.connection.close();
      }
    });
  });
});
