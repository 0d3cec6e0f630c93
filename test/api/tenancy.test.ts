import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeCustomer, activeLoan, offerOf } from '../helpers/credit.js';
import { files, registerCustomer } from '../helpers/customers.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

/**
 * Every record belongs to one (partner, environment). Another partner's record, or the same
 * partner's record in the other environment, is a 404 with the resource's code — never a 403 —
 * and never shows through a list, a filter or a cursor.
 */
let stack: TestStack;
let owner: Client;
const outsiders: Record<string, Client> = {};
/** Ids of records the owner made, by path placeholder. */
const owned: Record<string, string> = {};
/** The cpf of the owner's borrower, who signs the owner's loan. */
let ownerCpf = '';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
type Request = { body?: unknown; form?: FormData };

/** For each route that takes an id: a well-formed request per method, and the 404 code it answers. */
const matrix: Record<string, { requests: Partial<Record<Method, () => Request>>; code: string }> = {
  '/v3/auth/credentials/{client_id}': {
    requests: { GET: () => ({}), DELETE: () => ({}) },
    code: 'credential_not_found',
  },
  '/v3/customers/{customer_id}': {
    requests: { GET: () => ({}), PATCH: () => ({ body: { name: 'Taken Over' } }) },
    code: 'customer_not_found',
  },
  '/v3/customers/{customer_id}/documents': {
    requests: { GET: () => ({}), POST: () => ({ form: uploadForm() }) },
    code: 'customer_not_found',
  },
  '/v3/customers/{customer_id}/kyc-attachments': {
    requests: { POST: () => ({ form: uploadForm() }) },
    code: 'customer_not_found',
  },
  '/v3/customers/{customer_id}/documents/{document_id}': {
    requests: { GET: () => ({}) },
    code: 'customer_not_found',
  },
  '/v3/customers/{customer_id}/documents/{document_id}/file': {
    requests: { GET: () => ({}) },
    code: 'customer_not_found',
  },
  '/v3/customers/{customer_id}/biometrics': {
    requests: { POST: () => ({}) },
    code: 'customer_not_found',
  },
  '/v3/customers/{customer_id}/credit-offers': {
    requests: { GET: () => ({}) },
    code: 'customer_not_found',
  },
  '/v3/credit-offers/{credit_offer_id}': {
    requests: { GET: () => ({}) },
    code: 'credit_offer_not_found',
  },
  '/v3/credit-offers/{credit_offer_id}/simulations': {
    requests: { POST: () => ({ body: { amount: 100_000, installments: 3 } }) },
    code: 'credit_offer_not_found',
  },
  '/v3/credit-offers/{credit_offer_id}/simulations/{simulation_id}': {
    requests: { GET: () => ({}) },
    code: 'credit_offer_not_found',
  },
  '/v3/loans/{loan_id}': { requests: { GET: () => ({}) }, code: 'loan_not_found' },
  '/v3/loans/{loan_id}/cancel': {
    requests: { POST: () => ({ body: { reason: 'Taken over.' } }) },
    code: 'loan_not_found',
  },
  '/v3/loans/{loan_id}/transactions': { requests: { GET: () => ({}) }, code: 'loan_not_found' },
  '/v3/loans/{loan_id}/payoff': { requests: { GET: () => ({}) }, code: 'loan_not_found' },
  '/v3/loans/{loan_id}/contract': { requests: { GET: () => ({}) }, code: 'loan_not_found' },
  '/v3/sandbox/loans/{loan_id}/signatures': {
    requests: { POST: () => ({ body: { cpf: ownerCpf } }) },
    code: 'loan_not_found',
  },
  '/v3/sandbox/loans/{loan_id}/disbursement': {
    requests: { POST: () => ({ body: { outcome: 'failed' } }) },
    code: 'loan_not_found',
  },
  '/v3/sandbox/loans/{loan_id}/payments': {
    requests: { POST: () => ({ body: {} }) },
    code: 'loan_not_found',
  },
  '/v3/sandbox/loans/{loan_id}/payoff': {
    requests: { POST: () => ({ body: {} }) },
    code: 'loan_not_found',
  },
  '/v3/loans/{loan_id}/charges': {
    requests: { GET: () => ({}), POST: () => ({ body: { scope: 'next' } }) },
    code: 'loan_not_found',
  },
  '/v3/loans/{loan_id}/withdrawal': { requests: { POST: () => ({}) }, code: 'loan_not_found' },
  '/v3/loans/{loan_id}/agreements/simulations': {
    requests: { POST: () => ({ body: agreementTerms() }) },
    code: 'loan_not_found',
  },
  '/v3/loans/{loan_id}/agreements': {
    requests: {
      GET: () => ({}),
      POST: () => ({ body: { simulation_id: owned.agreement_simulation_id } }),
    },
    code: 'loan_not_found',
  },
  '/v3/agreements/{agreement_id}': { requests: { GET: () => ({}) }, code: 'agreement_not_found' },
  '/v3/sandbox/agreements/{agreement_id}/acceptance': {
    requests: { POST: () => ({}) },
    code: 'agreement_not_found',
  },
  '/v3/charges/{charge_id}': { requests: { GET: () => ({}) }, code: 'charge_not_found' },
  '/v3/charges/{charge_id}/qr.png': { requests: { GET: () => ({}) }, code: 'charge_not_found' },
  '/v3/sandbox/charges/{charge_id}/pay': {
    requests: { POST: () => ({ body: {} }) },
    code: 'charge_not_found',
  },
  '/v3/events/{event_id}': { requests: { GET: () => ({}) }, code: 'event_not_found' },
  '/v3/webhooks/endpoints/{id}': {
    requests: {
      GET: () => ({}),
      PATCH: () => ({ body: { status: 'disabled' } }),
      DELETE: () => ({}),
    },
    code: 'webhook_endpoint_not_found',
  },
  '/v3/webhooks/endpoints/{id}/deliveries': {
    requests: { GET: () => ({}) },
    code: 'webhook_endpoint_not_found',
  },
  '/v3/webhooks/endpoints/{id}/deliveries/{delivery_id}/resend': {
    requests: { POST: () => ({}) },
    code: 'webhook_endpoint_not_found',
  },
  '/v3/webhooks/endpoints/{id}/recover': {
    requests: { POST: () => ({ body: { since: '2026-01-01T00:00:00Z' } }) },
    code: 'webhook_endpoint_not_found',
  },
  '/v3/webhooks/endpoints/{id}/secret/rotate': {
    requests: { POST: () => ({ body: { expire_current_in: 0 } }) },
    code: 'webhook_endpoint_not_found',
  },
  '/v3/sandbox/customers/{customer_id}/review': {
    requests: { POST: () => ({ body: { items: [{ type: 'selfie', decision: 'approve' }] } }) },
    code: 'customer_not_found',
  },
  '/v3/sandbox/customers/{customer_id}/deny': {
    requests: { POST: () => ({ body: { reason: 'Taken over.' } }) },
    code: 'customer_not_found',
  },
  '/v3/sandbox/customers/{customer_id}/clock': {
    requests: {
      GET: () => ({}),
      POST: () => ({ body: { advance_to: new Date(Date.now() + 86_400_000).toISOString() } }),
    },
    code: 'customer_not_found',
  },
};

function uploadForm(): FormData {
  const form = new FormData();
  form.set('type', 'identity_card_front');
  form.set('file', new Blob([files.jpeg()]), 'front.jpg');
  return form;
}

beforeAll(async () => {
  stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1h' } });
  const [mine, theirs] = [await createPartner(stack, 'Owner'), await createPartner(stack, 'Other')];
  owner = client(stack, await tokenFor(stack, mine.credentials.sandbox));
  outsiders['another partner'] = client(stack, await tokenFor(stack, theirs.credentials.sandbox));
  outsiders['the owner’s production environment'] = client(
    stack,
    await tokenFor(stack, mine.credentials.production),
  );

  const credential = (await (
    await owner('/v3/auth/credentials', { method: 'POST', body: { name: 'owned' } })
  ).json()) as {
    client_id: string;
  };
  owned.client_id = credential.client_id;
  owned.id = (
    (await (
      await owner('/v3/webhooks/endpoints', {
        method: 'POST',
        body: { url: 'https://hooks.owner.example/x' },
      })
    ).json()) as { id: string }
  ).id;
  const customer = await registerCustomer(owner);
  owned.customer_id = customer.id;
  owned.delivery_id = `whd_${'0'.repeat(32)}`; // the endpoint is the outsider's first wall
  const form = new FormData();
  form.set('type', 'selfie');
  form.set('file', new Blob([files.png()]), 'selfie.png');
  owned.document_id = (
    (await (
      await owner(`/v3/customers/${customer.id}/documents`, { method: 'POST', form })
    ).json()) as {
      id: string;
    }
  ).id;
  const borrower = await activeCustomer(stack, owner);
  ownerCpf = borrower.cpf;
  const offer = await offerOf(owner, borrower.id);
  owned.credit_offer_id = offer.id;
  owned.simulation_id = (
    (await (
      await owner(`/v3/credit-offers/${offer.id}/simulations`, {
        method: 'POST',
        body: { amount: offer.min_amount, installments: offer.min_installments },
      })
    ).json()) as { id: string }
  ).id;
  // The loan takes a simulation of its own, so the matrix's simulation stays the offer's.
  const loanSimulation = (await (
    await owner(`/v3/credit-offers/${offer.id}/simulations`, {
      method: 'POST',
      body: { amount: offer.min_amount, installments: offer.min_installments },
    })
  ).json()) as { id: string };
  const loan = await owner('/v3/loans', {
    method: 'POST',
    body: {
      credit_offer_id: offer.id,
      simulation_id: loanSimulation.id,
      disbursement_account: { type: 'pix', pix_key: borrower.email },
    },
  });
  if (loan.status !== 201) throw new Error(`loan: ${loan.status} ${await loan.text()}`);
  owned.loan_id = ((await loan.json()) as { id: string }).id;
  owned.charge_id = await activeLoanCharge();
  const events = (await (await owner('/v3/events?limit=1')).json()) as { data: { id: string }[] };
  owned.event_id = events.data[0]!.id;
});
afterAll(async () => {
  await stack?.stop();
});

/** Terms of a payment agreement on every row, its first due date two weeks from today. */
const agreementTerms = () => ({
  rows: 'all',
  installments: 2,
  first_due_date: new Date(Date.now() + 15 * 86_400_000).toISOString().slice(0, 10),
});

/**
 * A charge of another of the owner's loans, taken to `active` (signed, disbursed by ops), and a
 * payment agreement of that loan (contract §17).
 */
async function activeLoanCharge(): Promise<string> {
  const loan = await activeLoan(stack, owner, { opsToken: OPS_TOKEN });
  const simulation = await owner(`/v3/loans/${loan.id}/agreements/simulations`, {
    method: 'POST',
    body: agreementTerms(),
  });
  if (simulation.status !== 201)
    throw new Error(`agreement simulation: ${simulation.status} ${await simulation.text()}`);
  owned.agreement_simulation_id = ((await simulation.json()) as { id: string }).id;
  const agreement = await owner(`/v3/loans/${loan.id}/agreements`, {
    method: 'POST',
    body: { simulation_id: owned.agreement_simulation_id },
  });
  if (agreement.status !== 201) throw new Error(`agreement: ${agreement.status}`);
  owned.agreement_id = ((await agreement.json()) as { id: string }).id;
  const response = await owner(`/v3/loans/${loan.id}/charges`, {
    method: 'POST',
    body: { scope: 'next' },
  });
  if (response.status !== 201) throw new Error(`charge: ${response.status}`);
  return ((await response.json()) as { id: string }).id;
}

const pathFor = (template: string) =>
  template.replace(/\{(\w+)\}/g, (_, name: string) => owned[name] ?? `missing-${name}`);

describe('the tenancy matrix', () => {
  it('covers every partner operation that takes a record id, with every method', async () => {
    const document = (await (await fetch(`${stack.baseUrl}/v3/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(document.paths)
      .filter(([path]) => path.includes('{'))
      .flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
      );
    const covered = Object.entries(matrix).flatMap(([path, { requests }]) =>
      Object.keys(requests).map((m) => `${m} ${path}`),
    );
    expect(operations.sort()).toEqual(covered.sort());
  });

  for (const [template, { requests, code }] of Object.entries(matrix)) {
    for (const [method, request] of Object.entries(requests) as [Method, () => Request][]) {
      it(`${method} ${template} is not found for other partners and environments`, async () => {
        for (const [who, api] of Object.entries(outsiders)) {
          const response = await api(pathFor(template), { method, ...request() });
          // The sandbox twins do not exist at all for a production token.
          const expected =
            who.includes('production') && template.startsWith('/v3/sandbox/')
              ? 'route_not_found'
              : code;
          expect({ who, status: response.status }).toEqual({ who, status: 404 });
          expect(await response.json()).toMatchObject({ code: expected });
        }
      });
    }
  }

  it('left the owner’s records as they were, and readable by the owner', async () => {
    const customer = (await (await owner(pathFor('/v3/customers/{customer_id}'))).json()) as {
      name: string;
      status: string;
      kyc: { type: string; status: string }[];
    };
    expect(customer).toMatchObject({ name: 'Maria Silva', status: 'pending_kyc' });
    expect(customer.kyc.find((item) => item.type === 'identity_card_front')?.status).toBe(
      'pending',
    );
    expect((await owner(pathFor('/v3/auth/credentials/{client_id}'))).status).toBe(200);
    expect(
      (await owner(pathFor('/v3/customers/{customer_id}/documents/{document_id}'))).status,
    ).toBe(200);
    expect(
      (await owner(pathFor('/v3/customers/{customer_id}/documents/{document_id}/file'))).status,
    ).toBe(200);
    expect((await owner(pathFor('/v3/events/{event_id}'))).status).toBe(200);
    // Nobody else moved the owner's clock.
    const clock = (await (
      await owner(pathFor('/v3/sandbox/customers/{customer_id}/clock'))
    ).json()) as { now: string; status: string };
    expect(clock.status).toBe('ready');
    expect(Math.abs(Date.parse(clock.now) - Date.now())).toBeLessThan(60_000);
    expect(
      await (await owner(pathFor('/v3/credit-offers/{credit_offer_id}'))).json(),
    ).toMatchObject({ status: 'accepted' });
    expect(await (await owner(pathFor('/v3/loans/{loan_id}'))).json()).toMatchObject({
      status: 'awaiting_signatures',
      signatures_received: 0,
    });
    expect(
      (await owner(pathFor('/v3/credit-offers/{credit_offer_id}/simulations/{simulation_id}')))
        .status,
    ).toBe(200);
    expect(await (await owner(pathFor('/v3/webhooks/endpoints/{id}'))).json()).toMatchObject({
      status: 'enabled',
    });
    expect(await (await owner(pathFor('/v3/charges/{charge_id}'))).json()).toMatchObject({
      status: 'active',
      paid_at: null,
    });
  });

  for (const [list, ownedId] of [
    ['/v3/auth/credentials', 'client_id'],
    ['/v3/customers', 'customer_id'],
    ['/v3/events', 'event_id'],
    ['/v3/credit-offers', 'credit_offer_id'],
    ['/v3/loans', 'loan_id'],
    ['/v3/webhooks/endpoints', 'id'],
  ] as const) {
    it(`${list} shows outsiders none of the owner’s records, and takes none as a cursor`, async () => {
      for (const api of Object.values(outsiders)) {
        const page = (await (await api(`${list}?limit=100`)).json()) as {
          data: Record<string, unknown>[];
        };
        expect(page.data.some((item) => Object.values(item).includes(owned[ownedId]))).toBe(false);
        const ownList = (await (await owner(`${list}?limit=1`)).json()) as {
          data: { id: string }[];
        };
        const cursor = await api(`${list}?starting_after=${ownList.data[0]!.id}`);
        expect(cursor.status).toBe(400);
        expect(await cursor.json()).toMatchObject({ code: 'invalid_cursor' });
      }
    });
  }

  it('filters never reach across: the owner’s cpf and external_id find nothing for outsiders', async () => {
    const customer = (await (await owner(pathFor('/v3/customers/{customer_id}'))).json()) as {
      cpf: string;
    };
    for (const api of Object.values(outsiders)) {
      const byCpf = (await (await api(`/v3/customers?cpf=${customer.cpf}`)).json()) as {
        data: unknown[];
      };
      expect(byCpf.data).toEqual([]);
    }
  });
});
