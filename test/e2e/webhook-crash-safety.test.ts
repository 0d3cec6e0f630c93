import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerCustomer } from '../helpers/customers.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';
import { freePort } from '../../src/devstack/free-port.js';
import { temporalSdkMetrics } from '../helpers/temporal-sdk-metrics.js';
import { spawnWorkerProcess } from '../helpers/worker-process.js';

let stack: TestStack;
let receiver: Receiver;
let api: Client;

beforeAll(async () => {
  receiver = await startReceiver();
  // No worker of the stack's own: this test kills and replaces them.
  stack = await startStack({
    worker: false,
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SANDBOX_REVIEW_DELAY: '1h' },
    webhookCa: receiver.ca,
  });
  api = client(stack, await tokenFor(stack, (await createPartner(stack)).credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

describe('crash safety of webhook delivery', () => {
  it('loses no delivery when the worker is killed mid-attempt; the retry carries the same webhook-id', async () => {
    const endpoint = (await (
      await api('/v3/webhooks/endpoints', {
        method: 'POST',
        body: { url: receiver.url('/crash'), events: ['customer.created'] },
      })
    ).json()) as { id: string };
    // The first attempt gets no answer: its worker is killed while it waits.
    receiver.answer((request) =>
      receiver.requests.filter((r) => r.path === request.path).length === 1
        ? 'hang'
        : { status: 200 },
    );

    const output: string[] = [];
    const metricsPort = await freePort();
    const doomed = await spawnWorkerProcess(stack, {
      ca: receiver.ca,
      output,
      env: { WORKER_METRICS_PORT: String(metricsPort) },
    });
    const customer = await registerCustomer(api);
    await eventually(
      async () => receiver.requests.find((r) => r.path === '/crash'),
      'the first attempt to arrive',
      60_000,
    );
    // Its /metrics: the process's figures and the Temporal SDK's (issue 42), on one target. A
    // workflow of a type the bundle lacks fails its task: the alert's counter appears.
    const broken = await stack.temporal.workflow.start('noSuchWorkflow', {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: `no-such-workflow-${Date.now()}`,
    });
    const scraped = await eventually(async () => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      return /^temporal_workflow_task_execution_failed_total\{.*workflow_type="noSuchWorkflow"/m.test(
        text,
      )
        ? text
        : undefined;
    }, 'the failed workflow task counted');
    await broken.terminate('a test of the worker metrics');
    expect(scraped).toMatch(/^file_store_orphans_removed_total 0$/m);
    for (const name of temporalSdkMetrics) expect(scraped).toMatch(new RegExp(`^${name}\\{`, 'm'));
    doomed.kill('SIGKILL');
    // One log format (issue 42): every line the worker wrote is a JSON object, the Temporal SDK's
    // own lines among them.
    const lines = output.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.find((line) => line.component === 'temporal-sdk')).toMatchObject({
      sdkComponent: 'worker',
      msg: 'Worker state changed',
    });

    // A new worker takes over; the lost attempt times out on the server and is retried on schedule.
    const worker = await stack.startWorker();
    try {
      const [first, second] = await eventually(
        async () => {
          const arrived = receiver.requests.filter(
            (r) => r.path === '/crash' && r.body.includes(customer.id),
          );
          return arrived.length >= 2 ? arrived : undefined;
        },
        'the retry after the crash',
        90_000,
      );
      expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      expect(second!.body).toBe(first!.body);
      const delivered = await eventually(
        async () => {
          const page = (await (
            await api(`/v3/webhooks/endpoints/${endpoint.id}/deliveries`)
          ).json()) as {
            data: { status: string; attempts: { number: number }[] }[];
          };
          return page.data[0]?.status === 'succeeded' ? page.data : undefined;
        },
        'the delivery to succeed',
        30_000,
      );
      expect(delivered).toHaveLength(1);
    } finally {
      await worker.stop();
    }
  }, 150_000);
});
