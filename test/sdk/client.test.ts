import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  createClient,
  verifyWebhook,
  WebhookVerificationError,
  type Customer,
  type EmbeddedCreditClient,
  type Loan,
  type WebhookEvent,
} from '../../sdk/typescript/src/index.js';
import { fakeCpf, files } from '../helpers/customers.js';
import { createPartner, type TestPartner } from '../helpers/partners.js';
import { eventually, startStack, TestClock, type TestStack } from '../helpers/stack.js';

/*
 * The SDK against the real service: every resource once, a loan from a new customer to paid by
 * Pix, pagination, webhooks verified as they arrive (across a secret rotation), a token the API
 * refuses renewed.
 */
let stack: TestStack;
let partner: TestPartner;
let sdk: EmbeddedCreditClient;
const serverClock = new TestClock();
let receiver: Server;
let receiverUrl: string;
const deliveries: { headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  stack = await startStack({
    env: {
      WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true',
      // The SDK's review approves the customer; an automatic one would race it.
      SANDBOX_REVIEW_DELAY: '1h',
      // A cancelled loan's offer is followed by a new one at once.
      OFFER_RENEWAL_DELAY: '1s',
    },
    clock: serverClock,
  });
  partner = await createPartner(stack, 'SDK partner');
  sdk = createClient({
    baseUrl: stack.baseUrl,
    clientId: partner.credentials.sandbox.client_id,
    clientSecret: partner.credentials.sandbox.client_secret,
  });
});
afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

const newCustomer = () =>
  sdk.customers.create({
    cpf: fakeCpf({ notStartingWith9: true }),
    name: 'Maria Silva',
    email: `maria.${randomUUID().slice(0, 8)}@example.com`,
    phone: '+5511987654321',
  });

/** The deliveries of one event type about one record, verified with `secrets`. */
function deliveredEvents(secrets: string[], type: string, recordId: string): WebhookEvent[] {
  return deliveries
    .filter((delivery) => delivery.body.includes(recordId))
    .map((delivery) =>
      verifyWebhook(delivery.body, delivery.headers as Record<string, string>, secrets),
    )
    .filter((event) => event.type === type);
}

describe('the SDK against the real service', () => {
  let secret: string;
  let endpointId: string;
  let customer: Customer;
  let loan: Loan;

  it('registers a webhook endpoint on the loopback', async () => {
    const endpoint = await sdk.webhookEndpoints.create({ url: receiverUrl });
    expect(endpoint.secret).toMatch(/^whsec_/);
    secret = endpoint.secret;
    endpointId = endpoint.id;
    expect((await sdk.webhookEndpoints.retrieve(endpointId)).url).toBe(receiverUrl);
    const updated = await sdk.webhookEndpoints.update(endpointId, { description: 'sdk test' });
    expect(updated.description).toBe('sdk test');
    expect((await sdk.webhookEndpoints.list().toArray()).map((e) => e.id)).toContain(endpointId);
  });

  it('takes a customer through KYC: documents, biometrics, the sandbox review', async () => {
    customer = await newCustomer();
    expect(await sdk.customers.retrieve(customer.id)).toMatchObject({ id: customer.id });
    const updated = await sdk.customers.update(customer.id, { name: 'Maria S. Silva' });
    expect(updated.name).toBe('Maria S. Silva');
    for (const type of ['identity_card_front', 'identity_card_back', 'selfie'] as const)
      await sdk.customers.documents.upload(customer.id, {
        type,
        file: { data: files.pdf(), filename: `${type}.pdf`, contentType: 'application/pdf' },
      });
    const documents = await sdk.customers.documents.list(customer.id).toArray();
    expect(documents).toHaveLength(3);
    const first = await sdk.customers.documents.retrieve(customer.id, documents[0]!.id);
    expect(first.id).toBe(documents[0]!.id);
    const bytes = await sdk.customers.documents.download(customer.id, first.id);
    expect(Buffer.from(bytes).subarray(0, 5).toString()).toBe('%PDF-');

    const captured = await sdk.sandbox.captureBiometrics(customer.id);
    expect(captured.status).toBe('under_review');
    const reviewed = await sdk.sandbox.approveCustomer(customer.id);
    expect(reviewed.status).toBe('active');
  });

  it('simulates the offer, takes a loan, cancels one, signs and disburses the next', async () => {
    const offerOf = () =>
      eventually(async () => {
        for await (const offer of sdk.customers.creditOffers(customer.id, { status: 'available' }))
          return offer;
        return undefined;
      }, 'an available offer');
    let offer = await offerOf();
    expect(await sdk.creditOffers.retrieve(offer.id)).toMatchObject({ id: offer.id });
    expect((await sdk.creditOffers.list().toArray()).map((o) => o.id)).toContain(offer.id);

    const takeLoan = async () => {
      const simulation = await sdk.creditOffers.simulate(offer.id, {
        amount: offer.min_amount,
        installments: 3,
      });
      expect(Number.isInteger(simulation.principal_amount)).toBe(true);
      expect(await sdk.creditOffers.retrieveSimulation(offer.id, simulation.id)).toMatchObject({
        id: simulation.id,
      });
      return sdk.loans.create({
        credit_offer_id: offer.id,
        simulation_id: simulation.id,
        disbursement_account: { type: 'pix', pix_key: customer.email },
      });
    };
    const cancelled = await sdk.loans.cancel((await takeLoan()).id, { reason: 'changed mind' });
    expect(cancelled.status).toBe('cancelled');
    offer = await offerOf();

    loan = await takeLoan();
    expect(loan.status).toBe('awaiting_signatures');
    const contract = await sdk.loans.contract(loan.id);
    expect(Buffer.from(contract).subarray(0, 5).toString()).toBe('%PDF-');
    await sdk.sandbox.signLoan(loan.id, { cpf: loan.signers[0]!.cpf });
    loan = await eventually(async () => {
      const current = await sdk.loans.retrieve(loan.id);
      return current.status === 'processing' ? current : undefined;
    }, 'the loan to be processing');
    loan = await sdk.sandbox.reportDisbursement(loan.id, { outcome: 'confirmed' });
    expect(loan.status).toBe('active');
    const active = await sdk.loans.list({ status: 'active' }).toArray();
    expect(active.map((l) => l.id)).toEqual([loan.id]);
  });

  it('pays an installment by a Pix charge, then the rest through the payoff', async () => {
    const charge = await sdk.loans.charges.create(loan.id, { scope: 'next' });
    expect(Number.isInteger(charge.amount)).toBe(true);
    expect((await sdk.charges.retrieve(charge.id)).status).toBe('active');
    const png = await sdk.charges.qrCode(charge.id);
    expect(Buffer.from(png).subarray(1, 4).toString()).toBe('PNG');
    const paid = await sdk.sandbox.payCharge(charge.id);
    expect(paid.status).toBe('paid');
    expect((await sdk.loans.charges.list(loan.id).toArray()).map((c) => c.id)).toContain(charge.id);

    const quote = await sdk.loans.payoff(loan.id);
    expect(Number.isInteger(quote.payoff_amount)).toBe(true);
    await sdk.sandbox.payOffLoan(loan.id);
    const finished = await eventually(async () => {
      const current = await sdk.loans.retrieve(loan.id);
      return current.status === 'finished' ? current : undefined;
    }, 'the loan to finish');
    expect(finished.status).toBe('finished');
    const types = (await sdk.loans.transactions(loan.id).toArray()).map((t) => t.type);
    expect(types).toContain('disbursement');

    // The withdrawal right has nothing to return once the loan is paid.
    const refused = await sdk.loans.withdraw(loan.id).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(409);
  });

  it('moves the customer’s sandbox clock', async () => {
    const before = await sdk.sandbox.clock(customer.id);
    const advanceTo = new Date(Date.parse(before.now) + 86_400_000).toISOString();
    const moving = await sdk.sandbox.advanceClock(customer.id, { advance_to: advanceTo });
    expect(moving.customer_id).toBe(customer.id);
    await eventually(async () => {
      const clock = await sdk.sandbox.clock(customer.id);
      return clock.status === 'ready' ? clock : undefined;
    }, 'the clock to be ready');
  });

  it('reads events, and verifies their real deliveries, typed by event', async () => {
    const finished = await sdk.events.list({ type: 'loan.finished' }).toArray();
    expect(finished.map((event) => (event.data as { id: string }).id)).toContain(loan.id);
    expect((await sdk.events.retrieve(finished[0]!.id)).type).toBe('loan.finished');

    const [active] = await eventually(async () => {
      const found = deliveredEvents([secret], 'loan.active', loan.id);
      return found.length ? found : undefined;
    }, 'loan.active delivered');
    // The union narrows by type.
    if (active!.type !== 'loan.active') throw new Error('narrowed');
    expect(active.data).toMatchObject({ id: loan.id, status: 'active' });

    const endpointDeliveries = await sdk.webhookEndpoints.deliveries(endpointId).toArray();
    expect(endpointDeliveries.length).toBeGreaterThan(3);
    const resent = await sdk.webhookEndpoints.resendDelivery(endpointId, endpointDeliveries[0]!.id);
    expect(resent).toBeDefined();
  });

  it('verifies deliveries across a secret rotation: both secrets sign until the old one expires', async () => {
    const rotated = await sdk.webhookEndpoints.rotateSecret(endpointId, {
      expire_current_in: 3600,
    });
    const newSecret = rotated.secret;
    expect(newSecret).not.toBe(secret);
    const after = deliveries.length;
    const other = await newCustomer();
    const delivery = await eventually(
      async () => deliveries.slice(after).find((d) => d.body.includes(other.id)),
      'a delivery after the rotation',
    );
    const headers = delivery.headers as Record<string, string>;
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secrets of [[newSecret], [secret], [secret, newSecret]])
      expect(verifyWebhook(delivery.body, headers, secrets).type).toBe('customer.created');
    const stranger = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(() => verifyWebhook(delivery.body, headers, [stranger])).toThrow(
      WebhookVerificationError,
    );
    expect(() => verifyWebhook(`${delivery.body} `, headers, [newSecret])).toThrow(
      WebhookVerificationError,
    );

    await sdk.webhookEndpoints.delete(endpointId);
    const gone = await sdk.webhookEndpoints.retrieve(endpointId).catch((error: unknown) => error);
    expect(gone).toMatchObject({ status: 404, code: 'webhook_endpoint_not_found' });
  });

  it('lists across pages, each after the last id of the one before', async () => {
    for (let i = 0; i < 4; i++) await newCustomer();
    const all = await sdk.customers.list().toArray();
    expect(all.length).toBeGreaterThanOrEqual(6);
    const pages = [];
    for await (const page of sdk.customers.list({ limit: 2 }).pages()) pages.push(page);
    expect(pages.length).toBe(Math.ceil(all.length / 2));
    expect(pages.flatMap((page) => page.data.map((c) => c.id))).toEqual(all.map((c) => c.id));
    const ascending = [];
    for await (const c of sdk.customers.list({ limit: 3, order: 'asc' })) ascending.push(c.id);
    expect(ascending).toEqual(all.map((c) => c.id).reverse());
  });

  it('throws problems as ApiError with code, status, detail and field errors', async () => {
    const missing = await sdk.customers
      .retrieve(`cust_${'0'.repeat(32)}`)
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(ApiError);
    expect(missing).toMatchObject({ status: 404, code: 'customer_not_found' });
    expect((missing as ApiError).detail).toBeTruthy();

    const invalid = await sdk.customers
      .create({ cpf: '123', name: 'X', email: 'not-an-email', phone: '+5511987654321' })
      .catch((error: unknown) => error);
    expect(invalid).toMatchObject({ status: 422, code: 'validation_error' });
    const paths = (invalid as ApiError).errors.map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['body.cpf', 'body.email']));
  });

  it('reaches payment agreements and the collections schedule', async () => {
    // The loan is finished: no agreement can be simulated on it, and it has none.
    const refused = await sdk.loans.agreements
      .simulate(loan.id, { rows: 'overdue', installments: 2, first_due_date: '2030-01-10' })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 409, code: 'invalid_state' });
    expect(await sdk.loans.agreements.list(loan.id).toArray()).toEqual([]);
    const unknown = `agr_${'0'.repeat(32)}`;
    for (const attempt of [sdk.agreements.retrieve(unknown), sdk.sandbox.acceptAgreement(unknown)])
      expect(await attempt.catch((error: unknown) => error)).toMatchObject({
        status: 404,
        code: 'agreement_not_found',
      });

    const steps = [{ offset_days: -3, channels: ['webhook' as const] }];
    expect((await sdk.collectionsSchedule.update({ steps })).steps).toEqual(steps);
    expect((await sdk.collectionsSchedule.retrieve()).steps).toEqual(steps);
    expect((await sdk.collectionsSchedule.update({ steps: [] })).steps).toEqual([]);
  });

  it('manages API credentials', async () => {
    const created = await sdk.credentials.create({ name: 'reporting' });
    expect(created.client_secret).toBeTruthy();
    expect((await sdk.credentials.retrieve(created.client_id)).client_id).toBe(created.client_id);
    expect((await sdk.credentials.list().toArray()).map((c) => c.client_id)).toContain(
      created.client_id,
    );
    await sdk.credentials.revoke(created.client_id);
  });

  it('renews a token the API refuses (expired on the server’s clock) and sends the request again', async () => {
    const tokenRequests: string[] = [];
    const counted = createClient({
      baseUrl: stack.baseUrl,
      clientId: partner.credentials.sandbox.client_id,
      clientSecret: partner.credentials.sandbox.client_secret,
      fetch: (request) => {
        if (new URL(request.url).pathname === '/v3/auth/token') tokenRequests.push(request.url);
        return fetch(request);
      },
    });
    await counted.customers.list({ limit: 1 }).pages().next();
    expect(tokenRequests).toHaveLength(1);
    // Two hours later for the API; the SDK's own clock still thinks the token is fresh.
    serverClock.advance(2 * 3600 * 1000);
    const created = await newCustomerWith(counted);
    expect(created.id).toMatch(/^cust_/);
    expect(tokenRequests).toHaveLength(2);
  });
});

const newCustomerWith = (client: EmbeddedCreditClient) =>
  client.customers.create({
    cpf: fakeCpf({ notStartingWith9: true }),
    name: 'Ana Souza',
    email: `ana.${randomUUID().slice(0, 8)}@example.com`,
    phone: '+5511987654321',
  });
