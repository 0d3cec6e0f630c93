import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { adjustSendRate, reserveSendSlot } from '../../src/db/queries/webhook-endpoints.js';
import { webhookDeliveries, webhookEndpoints } from '../../src/db/schema/index.js';
import { postWebhook } from '../../src/webhooks/sender.js';
import { registerCustomer } from '../helpers/customers.js';
import { recordHistory } from '../helpers/histories.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
let receiver: Receiver;
let api: Client;

beforeAll(async () => {
  receiver = await startReceiver();
  stack = await startStack({
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SANDBOX_REVIEW_DELAY: '1h' },
    webhookCa: receiver.ca,
  });
  api = client(stack, await tokenFor(stack, (await createPartner(stack)).credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});
beforeEach(() => {
  receiver.answer(() => ({ status: 200 }));
});

interface Endpoint {
  id: string;
  secret: string;
}
interface Delivery {
  id: string;
  event_id: string;
  status: string;
  attempts: { number: number; response_status: number | null; error: string | null }[];
}

async function endpointFor(
  path: string,
  events: string[] = ['customer.created'],
): Promise<Endpoint> {
  const response = await api('/v3/webhooks/endpoints', {
    method: 'POST',
    body: { url: receiver.url(path), events },
  });
  expect(response.status).toBe(201);
  return (await response.json()) as Endpoint;
}

const deliveriesOf = async (endpointId: string) =>
  (
    (await (await api(`/v3/webhooks/endpoints/${endpointId}/deliveries`)).json()) as {
      data: Delivery[];
    }
  ).data;

describe('webhook delivery to a local HTTPS receiver', () => {
  it('signs Standard Webhooks the official library verifies, with webhook-id = the event id', async () => {
    const PATH = '/verify';
    const endpoint = await endpointFor(PATH);
    const before = receiver.requests.length;
    const customer = await registerCustomer(api);
    const request = await eventually(
      async () =>
        receiver.requests
          .slice(before)
          .find((r) => r.path === PATH && r.body.includes(customer.id)),
      'the delivery to arrive',
    );
    const payload = new Webhook(endpoint.secret).verify(request.body, request.headers) as {
      id: string;
      type: string;
      data: { id: string };
    };
    expect(payload).toMatchObject({ type: 'customer.created', data: { id: customer.id } });
    expect(request.headers['webhook-id']).toBe(payload.id);
    expect(payload.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(Number(request.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);

    const [delivery] = await eventually(async () => {
      const list = await deliveriesOf(endpoint.id);
      return list[0]?.status === 'succeeded' ? list : undefined;
    }, 'the delivery to be recorded');
    expect(delivery).toMatchObject({
      event_id: payload.id,
      attempts: [{ number: 1, response_status: 200, error: null }],
    });

    // Ops find the delivery's workflow by endpoint or event, and read each attempt's answer.
    const handle = stack.temporal.workflow.getHandle(`webhook-delivery/${delivery!.id}`);
    const description = await handle.describe();
    expect(
      description.typedSearchAttributes
        .getAll()
        .map((pair) => `${pair.key.name}=${String(pair.value)}`),
    ).toEqual(expect.arrayContaining([`EndpointId=${endpoint.id}`, `EventId=${payload.id}`]));
    // On the deliveries' own queue: a backlog of retries never delays a partner's Update.
    expect(description.taskQueue).toBe(`${stack.config.temporal.taskQueue}-webhooks`);
    await handle.result();
    await recordHistory(handle, 'webhook-delivery', 'delivered-first-attempt');
    const metadata = await handle.query<{ currentDetails?: string }>(
      '__temporal_workflow_metadata',
    );
    expect(metadata.currentDetails).toMatch(/^attempt 1: HTTP 200 in \d+ ms$/);
  });

  it('retries a failed attempt on the schedule with the same id and the same bytes', async () => {
    const PATH = '/retry';
    const endpoint = await endpointFor(PATH);
    let calls = 0;
    receiver.answer((r) => (r.path === PATH && ++calls === 1 ? { status: 500 } : { status: 200 }));
    const before = receiver.requests.length;
    const customer = await registerCustomer(api);
    const [first, second] = await eventually(
      async () => {
        const mine = receiver.requests
          .slice(before)
          .filter((r) => r.path === PATH && r.body.includes(customer.id));
        return mine.length >= 2 ? mine : undefined;
      },
      'the second attempt',
      30_000,
    );
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(5_000);
    expect(new Webhook(endpoint.secret).verify(second!.body, second!.headers)).toBeTruthy();
    const [delivery] = await eventually(async () => {
      const list = await deliveriesOf(endpoint.id);
      return list[0]?.status === 'succeeded' ? list : undefined;
    }, 'success on the second attempt');
    expect(delivery!.attempts.map((a) => a.response_status)).toEqual([500, 200]);
  });

  it('disables the endpoint as gone on 410', async () => {
    const PATH = '/gone';
    const endpoint = await endpointFor(PATH);
    receiver.answer((r) => ({ status: r.path === PATH ? 410 : 200 }));
    await registerCustomer(api);
    const disabled = await eventually(async () => {
      const current = (await (await api(`/v3/webhooks/endpoints/${endpoint.id}`)).json()) as {
        disabled_reason: string | null;
      };
      return current.disabled_reason === 'gone' ? current : undefined;
    }, 'the endpoint to be disabled');
    expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
  });

  it('signs with both secrets during a rotation overlap, and only the new one after it', async () => {
    const PATH = '/rotate';
    const endpoint = await endpointFor(PATH);
    const rotated = (await (
      await api(`/v3/webhooks/endpoints/${endpoint.id}/secret/rotate`, {
        method: 'POST',
        body: { expire_current_in: 3600 },
      })
    ).json()) as { secret: string };
    let before = receiver.requests.length;
    let customer = await registerCustomer(api);
    const during = await eventually(
      async () =>
        receiver.requests
          .slice(before)
          .find((r) => r.path === PATH && r.body.includes(customer.id)),
      'a delivery during the overlap',
    );
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(endpoint.secret).verify(during.body, during.headers)).toBeTruthy();
    expect(new Webhook(rotated.secret).verify(during.body, during.headers)).toBeTruthy();

    const again = (await (
      await api(`/v3/webhooks/endpoints/${endpoint.id}/secret/rotate`, {
        method: 'POST',
        body: { expire_current_in: 0 },
      })
    ).json()) as { secret: string };
    before = receiver.requests.length;
    customer = await registerCustomer(api);
    const after = await eventually(
      async () =>
        receiver.requests
          .slice(before)
          .find((r) => r.path === PATH && r.body.includes(customer.id)),
      'a delivery after the overlap',
    );
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(new Webhook(again.secret).verify(after.body, after.headers)).toBeTruthy();
    expect(() => new Webhook(rotated.secret).verify(after.body, after.headers)).toThrow();
  });

  it('resends a delivery as a new one with the same webhook-id', async () => {
    const PATH = '/resend';
    const endpoint = await endpointFor(PATH);
    const customer = await registerCustomer(api);
    const [original] = await eventually(async () => {
      const list = await deliveriesOf(endpoint.id);
      return list[0]?.status === 'succeeded' ? list : undefined;
    }, 'the first delivery');
    const before = receiver.requests.length;
    const resent = await api(
      `/v3/webhooks/endpoints/${endpoint.id}/deliveries/${original!.id}/resend`,
      { method: 'POST' },
    );
    expect(resent.status).toBe(202);
    const copy = (await resent.json()) as Delivery & { resend_of: string };
    expect(copy).toMatchObject({
      event_id: original!.event_id,
      resend_of: original!.id,
      status: 'pending',
    });
    const request = await eventually(
      async () =>
        receiver.requests
          .slice(before)
          .find((r) => r.path === PATH && r.body.includes(customer.id)),
      'the resend to arrive',
    );
    expect(request.headers['webhook-id']).toBe(original!.event_id);
  });

  it('cancels pending deliveries when the endpoint is deleted', async () => {
    const PATH = '/deleted';
    const endpoint = await endpointFor(PATH);
    receiver.answer((r) => ({ status: r.path === PATH ? 503 : 200 }));
    await registerCustomer(api);
    const [pending] = await eventually(async () => {
      const list = await deliveriesOf(endpoint.id);
      return list[0]?.attempts.length ? list : undefined;
    }, 'a failed first attempt');
    expect(pending!.status).toBe('pending');
    expect((await api(`/v3/webhooks/endpoints/${endpoint.id}`, { method: 'DELETE' })).status).toBe(
      204,
    );
    const [row] = await stack.database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, pending!.id));
    expect(row!.status).toBe('cancelled');
  });
});

describe('endpoint health', () => {
  it('halves the send rate on 429 and wins it back with successes', async () => {
    const PATH = '/slow';
    const endpoint = await endpointFor(PATH);
    let calls = 0;
    receiver.answer((r) =>
      r.path === PATH && ++calls === 1
        ? { status: 429, headers: { 'Retry-After': '1' } }
        : { status: 200 },
    );
    await registerCustomer(api);
    await eventually(
      async () => {
        const list = await deliveriesOf(endpoint.id);
        return list[0]?.status === 'succeeded' ? list : undefined;
      },
      'the delivery after the 429',
      30_000,
    );
    const [row] = await stack.database.db
      .select()
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpoint.id));
    expect(row!.sendRate).toBeCloseTo((50 / 2) * 1.1);
  });

  it('queues attempts to one endpoint at its send rate', async () => {
    const endpoint = await endpointFor('/queue');
    const tenant = {
      partnerId: (
        await stack.database.db
          .select()
          .from(webhookEndpoints)
          .where(eq(webhookEndpoints.id, endpoint.id))
      )[0]!.partnerId,
      environment: 'sandbox' as const,
    };
    for (let i = 0; i < 5; i++)
      await adjustSendRate(stack.database.db, tenant, endpoint.id, 'slow_down'); // 50 → 1.5625/s
    const waits = [];
    for (let i = 0; i < 3; i++)
      waits.push(await reserveSendSlot(stack.database.db, tenant, endpoint.id));
    expect(waits[0]).toBeLessThan(700); // the first slot may still hold the previous send's spacing
    expect(waits[1]! - waits[0]!).toBeGreaterThan(550); // 1 / 1.5625 s = 640 ms apart
    expect(waits[2]! - waits[1]!).toBeGreaterThan(550);
    for (let i = 0; i < 20; i++)
      await adjustSendRate(stack.database.db, tenant, endpoint.id, 'slow_down');
    const [floor] = await stack.database.db
      .select()
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpoint.id));
    expect(floor!.sendRate).toBe(0.1);
  });

  it('disables an endpoint after five events in a row end failed, and a success resets the count', async () => {
    const endpoint = await endpointFor('/failing');
    const [row] = await stack.database.db
      .select()
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpoint.id));
    const tenant = { partnerId: row!.partnerId, environment: 'sandbox' as const };
    const activities = stack.activities();
    const delivery = async (outcome: 'failed' | 'succeeded') => {
      const id = `whd_${randomUUID().replaceAll('-', '')}`;
      await stack.database.db.insert(webhookDeliveries).values({
        id,
        ...tenant,
        eventId: `evt_${id.slice(4)}`,
        endpointId: endpoint.id,
        status: 'pending',
      });
      await activities.finishDelivery({
        deliveryId: id,
        eventId: `evt_${id.slice(4)}`,
        endpointId: endpoint.id,
        ...tenant,
        outcome,
      });
    };
    const state = async () =>
      (
        await stack.database.db
          .select()
          .from(webhookEndpoints)
          .where(eq(webhookEndpoints.id, endpoint.id))
      )[0]!;
    for (let i = 0; i < 4; i++) await delivery('failed');
    await delivery('succeeded');
    for (let i = 0; i < 4; i++) await delivery('failed');
    expect(await state()).toMatchObject({ status: 'enabled', consecutiveFailedEvents: 4 });
    await delivery('failed');
    expect(await state()).toMatchObject({ status: 'disabled', disabledReason: 'failing' });
  });

  it('recovers every failed delivery since a time', async () => {
    const PATH = '/recover';
    const endpoint = await endpointFor(PATH);
    const [row] = await stack.database.db
      .select()
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpoint.id));
    const tenant = { partnerId: row!.partnerId, environment: row!.environment };
    const events = (await (await api('/v3/events?limit=3')).json()) as { data: { id: string }[] };
    await stack.database.db.insert(webhookDeliveries).values(
      events.data.map((event) => ({
        id: `whd_${randomUUID().replaceAll('-', '')}`,
        ...tenant,
        eventId: event.id,
        endpointId: endpoint.id,
        status: 'failed' as const,
      })),
    );
    const before = receiver.requests.length;
    const recovered = await api(`/v3/webhooks/endpoints/${endpoint.id}/recover`, {
      method: 'POST',
      body: { since: new Date(Date.now() - 60_000).toISOString() },
    });
    expect(recovered.status).toBe(202);
    expect(await recovered.json()).toEqual({ recovered: 3 });
    const arrived = await eventually(
      async () => {
        const mine = receiver.requests.slice(before).filter((r) => r.path === PATH);
        return mine.length >= 3 ? mine : undefined;
      },
      'the recovered deliveries',
      30_000,
    );
    expect(new Set(arrived.map((r) => r.headers['webhook-id']))).toEqual(
      new Set(events.data.map((e) => e.id)),
    );
  });
});

describe('the sender', () => {
  it('gives up on a receiver that does not answer within the timeout', async () => {
    receiver.answer(() => 'hang');
    const result = await postWebhook({
      url: receiver.url('/hang'),
      headers: {},
      body: '{}',
      allowPrivate: true,
      ca: receiver.ca,
    });
    expect(result).toMatchObject({ status: null, error: 'no response in 15 s' });
    expect(result.durationMs).toBeGreaterThanOrEqual(14_900);
  });

  it('refuses an internal target unless private targets are allowed, and never follows a redirect', async () => {
    const refused = await postWebhook({
      url: receiver.url('/x'),
      headers: {},
      body: '{}',
      allowPrivate: false,
      ca: receiver.ca,
    });
    expect(refused.error).toContain('loopback');
    receiver.answer(() => ({ status: 302, headers: { Location: 'https://example.com/' } }));
    const redirected = await postWebhook({
      url: receiver.url('/r'),
      headers: {},
      body: '{}',
      allowPrivate: true,
      ca: receiver.ca,
    });
    expect(redirected.status).toBe(302);
  });
});
