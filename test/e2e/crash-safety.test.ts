import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events as eventsTable } from '../../src/db/schema/index.js';
import type { KycItem } from '../../src/domain/customers/kyc.js';
import { files, registerCustomer, upload, type CustomerBody } from '../helpers/customers.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';
import { completeBiometricsCapture } from '../helpers/hosted.js';

let stack: TestStack;
let api: Client;
let partnerId: string;

beforeAll(async () => {
  // No worker of the stack's own: this test starts and stops them.
  stack = await startStack({ worker: false, env: { SANDBOX_REVIEW_DELAY: '4s' } });
  const partner = await createPartner(stack);
  partnerId = partner.partner_id;
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
});

describe('crash safety of onboarding', () => {
  it('finishes after the worker is stopped mid-onboarding and a new one starts, writing each event once', async () => {
    let worker = await stack.startWorker();
    const customer = await registerCustomer(api);
    for (const type of ['identity_card_front', 'identity_card_back', 'selfie']) {
      expect(
        (await upload(api, customer.id, type, { bytes: files.png(), name: `${type}.png` })).status,
      ).toBe(201);
    }
    const session = (await (
      await api(`/v3/customers/${customer.id}/biometrics`, { method: 'POST' })
    ).json()) as {
      session_url: string;
    };
    expect((await completeBiometricsCapture(stack.baseUrl, session.session_url)).status).toBe(200);
    expect(
      ((await (await api(`/v3/customers/${customer.id}`)).json()) as CustomerBody).status,
    ).toBe('under_review');

    // The worker goes away while the review timer is pending, and stays away past it.
    await worker.stop();
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(
      ((await (await api(`/v3/customers/${customer.id}`)).json()) as CustomerBody).status,
    ).toBe('under_review');

    worker = await stack.startWorker();
    try {
      await eventually(async () => {
        const current = (await (await api(`/v3/customers/${customer.id}`)).json()) as CustomerBody;
        return current.status === 'active' ? current : undefined;
      }, 'the customer to become active after the restart');
    } finally {
      await worker.stop();
    }

    const page = (await (await api('/v3/events?order=asc&limit=100')).json()) as {
      data: { id: string; type: string; data: { id: string; kyc?: unknown; status: string } }[];
    };
    const mine = page.data.filter((event) => event.data.id === customer.id);
    const types = mine.map((event) => event.type);
    expect(types.filter((type) => type === 'customer.created')).toHaveLength(1);
    expect(types.filter((type) => type === 'customer.under_review')).toHaveLength(1);
    expect(types.filter((type) => type === 'customer.active')).toHaveLength(1);
    // No change was written twice: every KYC update differs from the one before it.
    const snapshots = mine
      .filter((e) => e.type === 'customer.kyc_updated')
      .map((e) => JSON.stringify(e.data));
    expect(new Set(snapshots).size).toBe(snapshots.length);
    expect(types.at(-1)).toBe('customer.active');
  });

  it('records a change once even when its write is retried after the first one committed', async () => {
    const customer = await registerCustomer(api);
    const activities = stack.activities();
    const change = {
      tenant: { partnerId, environment: 'sandbox' as const },
      customerId: customer.id,
      state: { status: 'pending_kyc' as const, kyc: customer.kyc as KycItem[] },
      events: [
        {
          id: `evt_${randomUUID().replaceAll('-', '')}`,
          type: 'customer.kyc_updated',
          data: { id: customer.id },
        },
      ],
    };
    // A worker that dies after the commit but before reporting: Temporal runs the activity again.
    await activities.persistCustomerChange(change);
    await activities.persistCustomerChange(change);
    const written = await stack.database.db
      .select()
      .from(eventsTable)
      .where(eq(eventsTable.id, change.events[0]!.id));
    expect(written).toHaveLength(1);
  });
});
