import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { files, registerCustomer, upload, type CustomerBody } from '../helpers/customers.js';
import { recordHistory } from '../helpers/histories.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';
import { completeBiometricsCapture } from '../helpers/hosted.js';

interface EventBody {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

let stack: TestStack;
let api: Client;

beforeAll(async () => {
  stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1s' } });
  const partner = await createPartner(stack);
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
});

const getCustomer = async (id: string) =>
  (await (await api(`/v3/customers/${id}`)).json()) as CustomerBody;
const itemStatuses = (customer: CustomerBody) =>
  Object.fromEntries(customer.kyc.map((i) => [i.type, i.status]));

/** This customer's events, oldest first, as a partner reads them. */
async function eventsOf(customerId: string): Promise<EventBody[]> {
  const page = (await (await api('/v3/events?order=asc&limit=100')).json()) as {
    data: EventBody[];
  };
  return page.data.filter((event) => event.data.id === customerId);
}

describe('a sandbox customer, from registration to active', () => {
  it('walks pending_kyc → under_review → active with the KYC array and events at each step', async () => {
    // 1. Registration: pending_kyc, every item pending, customer.created.
    const registered = await registerCustomer(api, {
      external_id: 'partner-ref-1',
      cnpj: '12.ABC.345/01DE-35',
    });
    expect(registered.status).toBe('pending_kyc');
    expect(registered.cnpj).toBe('12ABC34501DE35');
    expect(itemStatuses(registered)).toEqual({
      identity_card_front: 'pending',
      identity_card_back: 'pending',
      selfie: 'pending',
      biometrics: 'pending',
      ccmei: 'pending',
    });
    const [created] = await eventsOf(registered.id);
    expect(created).toMatchObject({ type: 'customer.created' });
    expect(created!.data).toEqual({
      id: registered.id,
      status: 'pending_kyc',
      cpf: registered.cpf,
      cnpj: '12ABC34501DE35',
      name: 'Maria Silva',
      email: registered.email,
      phone: '+5511987654321',
      trading_name: null,
      external_id: 'partner-ref-1',
    });

    // The onboarding workflow exists, findable by the customer's id.
    const workflow = await stack.temporal.workflow
      .getHandle(`customer-onboarding/${registered.id}`)
      .describe();
    expect(workflow.status.name).toBe('RUNNING');
    expect(
      workflow.typedSearchAttributes
        .getAll()
        .map((pair) => `${pair.key.name}=${String(pair.value)}`),
    ).toEqual(expect.arrayContaining([`CustomerId=${registered.id}`, 'Environment=sandbox']));
    // …and summarised for ops by ids only, with no personal data.
    const summary = await workflow.staticSummary();
    expect(summary).toContain(registered.id);
    expect(summary).not.toContain(registered.cpf);

    // 2. Documents: each upload answers 201 and moves its item to submitted.
    for (const [type, file] of [
      ['identity_card_front', { bytes: files.jpeg(), name: 'front.jpg' }],
      ['identity_card_back', { bytes: files.jpeg(), name: 'back.jpg' }],
      ['selfie', { bytes: files.png(), name: 'selfie.png' }],
      ['ccmei', { bytes: files.pdf(), name: 'ccmei.pdf' }],
    ] as const) {
      const response = await upload(api, registered.id, type, file);
      expect(response.status).toBe(201);
      const document = (await response.json()) as {
        id: string;
        status: string;
        type: string;
        sha256: string;
      };
      expect(document).toMatchObject({ type, status: 'submitted' });
      expect(response.headers.get('location')).toBe(
        `/v3/customers/${registered.id}/documents/${document.id}`,
      );
    }
    const documented = await getCustomer(registered.id);
    expect(documented.status).toBe('pending_kyc');
    expect(itemStatuses(documented).biometrics).toBe('pending');

    // 3. Biometrics on the hosted page; the last item submitted → under_review.
    const session = (await (
      await api(`/v3/customers/${registered.id}/biometrics`, { method: 'POST' })
    ).json()) as {
      session_url: string;
      expires_at: string;
    };
    expect(session.session_url).toMatch(/\/hosted\/biometrics\/[A-Za-z0-9_-]{43}$/);
    const hostedPath = new URL(session.session_url).pathname;
    const page = await fetch(`${stack.baseUrl}${hostedPath}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Enviar código');
    const completed = await completeBiometricsCapture(stack.baseUrl, session.session_url, {
      email: registered.email,
    });
    expect(await completed.text()).toContain('Captura recebida');

    // 4. The sandbox reviews everything after SANDBOX_REVIEW_DELAY: active.
    const active = await eventually(async () => {
      const customer = await getCustomer(registered.id);
      return customer.status === 'active' ? customer : undefined;
    }, 'the customer to become active');
    expect(Object.values(itemStatuses(active)).every((status) => status === 'approved')).toBe(true);

    const documents = (await (
      await api(`/v3/customers/${registered.id}/documents?order=asc`)
    ).json()) as {
      data: { type: string; status: string }[];
    };
    expect(documents.data.map((d) => `${d.type}:${d.status}`)).toEqual([
      'identity_card_front:approved',
      'identity_card_back:approved',
      'selfie:approved',
      'ccmei:approved',
    ]);

    // The events, in order: created first, active last, one status event right after the KYC
    // update that reached it. (The sandbox reviews each item its own delay after submission, so
    // how many review batches there are depends on timing; these properties do not.)
    const events = await eventsOf(registered.id);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('customer.created');
    expect(types.at(-1)).toBe('customer.active');
    expect(types.filter((t) => t === 'customer.under_review')).toHaveLength(1);
    expect(types.filter((t) => t === 'customer.active')).toHaveLength(1);
    expect(types.filter((t) => t === 'customer.kyc_updated').length).toBeGreaterThanOrEqual(6); // 5 submissions + review
    expect(types.slice(1).every((t) => t.startsWith('customer.') && t !== 'customer.created')).toBe(
      true,
    );
    for (const status of ['under_review', 'active']) {
      const at = types.indexOf(`customer.${status}`);
      expect(events[at - 1]).toMatchObject({ type: 'customer.kyc_updated', data: { status } });
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    const lastKyc = events.at(-2)!.data as {
      status: string;
      kyc: { status: string }[];
      external_id: string;
    };
    expect(lastKyc.status).toBe('active');
    expect(lastKyc.external_id).toBe('partner-ref-1');
    expect(lastKyc.kyc.every((item) => item.status === 'approved')).toBe(true);
    expect(events.at(-1)!.data).toEqual({
      id: registered.id,
      status: 'active',
      external_id: 'partner-ref-1',
    });
    // One event by id, too.
    const one = await api(`/v3/events/${events[0]!.id}`);
    expect(((await one.json()) as EventBody).type).toBe('customer.created');

    await recordHistory(
      stack.temporal.workflow.getHandle(`customer-onboarding/${registered.id}`),
      'customer-onboarding',
      'sandbox-review-to-active',
    );

    // Ops read the current state in the workflow's details in the Temporal UI.
    const metadata = await stack.temporal.workflow
      .getHandle(`customer-onboarding/${registered.id}`)
      .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toContain('**Status:** active');
    expect(metadata.currentDetails).toContain('| biometrics | approved |');

    // The session is spent: its page says so and changes nothing.
    const again = await fetch(`${stack.baseUrl}${hostedPath}`);
    expect(again.status).toBe(410);
  });
});
