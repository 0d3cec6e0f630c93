import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { addDays, businessDate } from '../../src/domain/business-date.js';
import { simulateLoan } from '../../src/domain/credit/simulation.js';
import type { simulationSchema } from '../../src/http/routes/credit-offers/schema.js';
import { activeCustomer, offerOf, type OfferBody } from '../helpers/credit.js';
import { recordHistory } from '../helpers/histories.js';
import { fakeCnpj, registerCustomer } from '../helpers/customers.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

type SimulationBody = z.infer<typeof simulationSchema>;

interface EventBody {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

let stack: TestStack;
let api: Client;
let production: Client;
let otherPartner: Client;

beforeAll(async () => {
  stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1h', OFFER_VALIDITY: '30d' } });
  const partner = await createPartner(stack);
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
  production = client(stack, await tokenFor(stack, partner.credentials.production));
  otherPartner = client(
    stack,
    await tokenFor(stack, (await createPartner(stack, 'Other')).credentials.sandbox),
  );
});
afterAll(async () => {
  await stack?.stop();
});

const simulate = (offerId: string, body: Record<string, unknown>) =>
  api(`/v3/credit-offers/${offerId}/simulations`, { method: 'POST', body });

async function eventsOfType(type: string): Promise<EventBody[]> {
  const page = (await (await api(`/v3/events?type=${type}&limit=100`)).json()) as {
    data: EventBody[];
  };
  return page.data;
}

/** The sandbox terms documented in docs/decisions.md, read off the cpf. */
function expectedTerms(cpf: string) {
  const digit = (position: number) => Number(cpf[position - 1]);
  const rate = [0.0199, 0.0249, 0.0299, 0.0349][digit(4) % 4]!;
  return {
    approved_amount: (5_000 + (Number(cpf.slice(1, 3)) % 45) * 1_000) * 100,
    min_amount: 50_000,
    monthly_interest_rate: rate,
    min_installments: 3,
    max_installments: [12, 24, 36, 48][digit(5) % 4]!,
  };
}

describe('credit offers and simulations over HTTP', () => {
  let offer: OfferBody;
  let customerId: string;

  it('an active customer gets one available offer with every field of contract §6, and its event', async () => {
    const endpoint = (await (
      await api('/v3/webhooks/endpoints', {
        method: 'POST',
        body: { url: 'https://hooks.partner.example/offers', events: ['credit_offer.*'] },
      })
    ).json()) as { id: string };
    const customer = await activeCustomer(stack, api);
    customerId = customer.id;
    offer = await offerOf(api, customer.id);
    expect(Object.keys(offer).sort()).toEqual(
      [
        'id',
        'customer_id',
        'status',
        'currency',
        'approved_amount',
        'min_amount',
        'monthly_interest_rate',
        'annual_interest_rate',
        'min_installments',
        'max_installments',
        'valid_until',
        'created_at',
        'updated_at',
      ].sort(),
    );
    const terms = expectedTerms(customer.cpf);
    expect(offer).toMatchObject({
      customer_id: customer.id,
      status: 'available',
      currency: 'BRL',
      ...terms,
    });
    expect(offer.id).toMatch(/^co_[0-9a-f]{32}$/);
    // (1 + monthly)^12 − 1 to 4 decimals: 1.99 % → 26.68 %, 2.49 % → 34.33 %, 2.99 % → 42.41 %, 3.49 % → 50.93 %.
    const annual = { 0.0199: 0.2668, 0.0249: 0.3433, 0.0299: 0.4241, 0.0349: 0.5093 };
    expect(offer.annual_interest_rate).toBe(
      annual[terms.monthly_interest_rate as keyof typeof annual],
    );
    expect(Date.parse(offer.valid_until) - Date.parse(offer.created_at)).toBe(30 * 86_400_000);

    expect(await (await api(`/v3/credit-offers/${offer.id}`)).json()).toEqual(offer);
    const [event] = (await eventsOfType('credit_offer.available')).filter(
      (e) => e.data.id === offer.id,
    );
    expect(event!.data).toEqual(offer);
    // …and it goes to the partner's webhook endpoint through the same fan-out as every event.
    const deliveries = (await (
      await api(`/v3/webhooks/endpoints/${endpoint.id}/deliveries`)
    ).json()) as { data: { event_id: string }[] };
    expect(deliveries.data.map((d) => d.event_id)).toEqual([event!.id]);

    // Ops find the offer's workflow by the customer's id, with its state in the details.
    const handle = stack.temporal.workflow.getHandle(`credit-offers/${customer.id}`);
    const described = await handle.describe();
    expect(
      described.typedSearchAttributes.getAll().map((p) => `${p.key.name}=${String(p.value)}`),
    ).toEqual(expect.arrayContaining([`CustomerId=${customer.id}`, 'Environment=sandbox']));
    expect(await described.staticSummary()).toContain(customer.id);
    const metadata = await handle.query<{ currentDetails?: string }>(
      '__temporal_workflow_metadata',
    );
    expect(metadata.currentDetails).toContain(`**Offer:** ${offer.id} · **Status:** available`);
    expect(metadata.currentDetails).toContain(`**Valid until:** ${offer.valid_until}`);
  });

  it('simulates an offer with every field of contract §7, consistent to the centavo', async () => {
    const amount = offer.min_amount + 123_456;
    const response = await simulate(offer.id, { amount, installments: offer.min_installments });
    expect(response.status).toBe(201);
    const simulation = (await response.json()) as SimulationBody;
    expect(response.headers.get('location')).toBe(
      `/v3/credit-offers/${offer.id}/simulations/${simulation.id}`,
    );
    expect(simulation.id).toMatch(/^sim_[0-9a-f]{32}$/);
    // Every field of contract §7, in its order.
    expect(Object.keys(simulation)).toEqual([
      'id',
      'credit_offer_id',
      'customer_id',
      'currency',
      'requested_amount',
      'iof_amount',
      'principal_amount',
      'installments',
      'installment_amount',
      'total_amount',
      'total_interest_amount',
      'monthly_interest_rate',
      'annual_interest_rate',
      'cet_monthly',
      'cet_annual',
      'release_date',
      'first_due_date',
      'schedule',
      'valid_until',
      'created_at',
    ]);
    expect(Object.keys(simulation.schedule[0]!)).toEqual([
      'number',
      'due_date',
      'installment_amount',
      'principal_amount',
      'interest_amount',
      'balance_amount',
    ]);

    const today = businessDate(new Date());
    expect(simulation).toMatchObject({
      credit_offer_id: offer.id,
      customer_id: customerId,
      currency: 'BRL',
      requested_amount: amount,
      installments: offer.min_installments,
      monthly_interest_rate: offer.monthly_interest_rate,
      annual_interest_rate: offer.annual_interest_rate,
      release_date: today,
      first_due_date: addDays(today, 30),
    });
    // The API prices with the offer's rate, the individual IOF rates and today's dates.
    const { schedule, ...figures } = simulateLoan({
      requestedAmount: amount,
      installments: offer.min_installments,
      monthlyInterestRate: String(offer.monthly_interest_rate),
      releaseDate: today,
      firstDueDate: addDays(today, 30),
      borrower: 'individual',
      iof: stack.config.iof,
    });
    expect(simulation).toMatchObject({ ...figures, schedule });

    expect(simulation.principal_amount).toBe(simulation.requested_amount + simulation.iof_amount);
    expect(simulation.iof_amount).toBeGreaterThan(0);
    const sum = (pick: (row: SimulationBody['schedule'][number]) => number) =>
      simulation.schedule.reduce((total, row) => total + pick(row), 0);
    expect(sum((row) => row.principal_amount)).toBe(simulation.principal_amount);
    expect(sum((row) => row.installment_amount)).toBe(simulation.total_amount);
    expect(sum((row) => row.interest_amount)).toBe(simulation.total_interest_amount);
    expect(simulation.schedule.at(-1)!.balance_amount).toBe(0);
    expect(simulation.schedule.map((row) => row.number)).toEqual(
      [1, 2, 3].slice(0, offer.min_installments),
    );
    expect(simulation.installment_amount).toBe(simulation.schedule[0]!.installment_amount);
    expect(simulation.cet_annual).toBeGreaterThan(simulation.annual_interest_rate);
    expect(
      Date.parse(simulation.valid_until) - Date.parse(simulation.created_at),
    ).toBeLessThanOrEqual(86_400_000);
    expect(Date.parse(simulation.valid_until) - Date.parse(simulation.created_at)).toBeGreaterThan(
      86_400_000 - 5_000,
    );

    const read = await api(`/v3/credit-offers/${offer.id}/simulations/${simulation.id}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(simulation);
  });

  it('takes first_due_date: monthly on its day, clamped to the month’s end', async () => {
    const today = businessDate(new Date());
    const first = addDays(today, 45);
    const response = await simulate(offer.id, {
      amount: offer.approved_amount,
      installments: offer.max_installments,
      first_due_date: first,
    });
    expect(response.status).toBe(201);
    const simulation = (await response.json()) as SimulationBody;
    expect(simulation.first_due_date).toBe(first);
    expect(simulation.schedule[0]!.due_date).toBe(first);
    expect(simulation.schedule).toHaveLength(offer.max_installments);
    const day = Number(first.slice(8));
    for (const row of simulation.schedule) {
      const [year, month, rowDay] = row.due_date.split('-').map(Number) as [number, number, number];
      const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
      expect(rowDay).toBe(Math.min(day, lastDay));
    }
  });

  it('refuses bad input with 422, one entry per bad field, and stores nothing', async () => {
    const today = businessDate(new Date());
    const stored = async () =>
      (
        await stack.database.db.query.simulations.findMany({
          where: (simulations, { eq }) => eq(simulations.creditOfferId, offer.id),
        })
      ).length;
    const before = await stored();
    const outOfBounds = await simulate(offer.id, {
      amount: offer.min_amount - 1,
      installments: offer.max_installments + 1,
      first_due_date: addDays(today, 6),
    });
    expect(outOfBounds.status).toBe(422);
    const problem = (await outOfBounds.json()) as { code: string; errors: { path: string }[] };
    expect(problem.code).toBe('validation_error');
    expect(problem.errors.map((e) => e.path).sort()).toEqual([
      'body.amount',
      'body.first_due_date',
      'body.installments',
    ]);

    for (const [body, paths] of [
      [
        { amount: offer.approved_amount + 1, installments: offer.min_installments },
        ['body.amount'],
      ],
      [
        {
          amount: offer.min_amount,
          installments: offer.min_installments - 1,
          first_due_date: addDays(today, 46),
        },
        ['body.first_due_date', 'body.installments'],
      ],
      [{ amount: 1000.5, installments: 3 }, ['body.amount']],
      [{ amount: '100000', installments: 3 }, ['body.amount']],
      [{ installments: 3 }, ['body.amount']],
      [{ amount: 100_000, installments: 3, first_due_date: '2027-02-30' }, ['body.first_due_date']],
      [{ amount: 100_000, installments: 3, rate: 0.01 }, ['body.rate']],
    ] as const) {
      const response = await simulate(offer.id, body);
      expect({ body, status: response.status }).toEqual({ body, status: 422 });
      const errors = ((await response.json()) as { errors: { path: string }[] }).errors;
      expect(errors.map((e) => e.path).sort()).toEqual([...paths]);
    }
    // No simulation row was written, and the offer is as it was.
    expect(await stored()).toBe(before);
    expect(await (await api(`/v3/credit-offers/${offer.id}`)).json()).toEqual(offer);
  });

  it('answers 404 for unknown, malformed and other tenants’ offers and simulations', async () => {
    const unknown = `co_${'0'.repeat(32)}`;
    for (const path of [
      `/v3/credit-offers/${unknown}`,
      '/v3/credit-offers/not-an-id',
      `/v3/credit-offers/${unknown}/simulations/sim_${'0'.repeat(32)}`,
    ]) {
      const response = await api(path);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'credit_offer_not_found' });
    }
    const simulation = await api(`/v3/credit-offers/${offer.id}/simulations/sim_${'0'.repeat(32)}`);
    expect(await simulation.json()).toMatchObject({ code: 'simulation_not_found' });
    expect((await simulate(unknown, { amount: 100_000, installments: 3 })).status).toBe(404);

    for (const outsider of [production, otherPartner]) {
      const read = await outsider(`/v3/credit-offers/${offer.id}`);
      expect(await read.json()).toMatchObject({ code: 'credit_offer_not_found' });
      const simulated = await outsider(`/v3/credit-offers/${offer.id}/simulations`, {
        method: 'POST',
        body: { amount: offer.min_amount, installments: offer.min_installments },
      });
      expect(simulated.status).toBe(404);
      const list = (await (await outsider(`/v3/credit-offers?limit=100`)).json()) as {
        data: OfferBody[];
      };
      expect(list.data.some((o) => o.id === offer.id)).toBe(false);
      const mine = await outsider(`/v3/customers/${customerId}/credit-offers`);
      expect(await mine.json()).toMatchObject({ code: 'customer_not_found' });
      const cursor = await outsider(`/v3/credit-offers?starting_after=${offer.id}`);
      expect(cursor.status).toBe(400);
    }
  });

  it('lists offers with filters and sorts', async () => {
    const second = await activeCustomer(stack, api, { cnpj: fakeCnpj() });
    const secondOffer = await offerOf(api, second.id);
    const pending = await registerCustomer(api); // not active: no offer

    const all = (await (await api('/v3/credit-offers?order=asc')).json()) as {
      data: OfferBody[];
      has_more: boolean;
    };
    expect(all.data.map((o) => o.id)).toEqual([offer.id, secondOffer.id]);
    expect(all.has_more).toBe(false);
    const byCustomer = (await (await api(`/v3/credit-offers?customer_id=${second.id}`)).json()) as {
      data: OfferBody[];
    };
    expect(byCustomer.data.map((o) => o.id)).toEqual([secondOffer.id]);
    const expired = (await (await api('/v3/credit-offers?status=expired')).json()) as {
      data: OfferBody[];
    };
    expect(expired.data).toEqual([]);
    const byValidity = (await (
      await api('/v3/credit-offers?sort=valid_until&order=desc&limit=1')
    ).json()) as { data: OfferBody[]; has_more: boolean };
    expect(byValidity).toMatchObject({ data: [{ id: secondOffer.id }], has_more: true });
    const next = (await (
      await api(
        `/v3/credit-offers?sort=valid_until&order=desc&limit=1&starting_after=${secondOffer.id}`,
      )
    ).json()) as { data: OfferBody[]; has_more: boolean };
    expect(next).toMatchObject({ data: [{ id: offer.id }], has_more: false });
    const none = (await (await api(`/v3/customers/${pending.id}/credit-offers`)).json()) as {
      data: unknown[];
    };
    expect(none.data).toEqual([]);

    for (const query of ['status=gone', 'sort=amount', 'customer_id=cust_1', 'limit=0']) {
      expect((await api(`/v3/credit-offers?${query}`)).status).toBe(422);
    }

    // An MEI (a customer with a cnpj) is priced with the MEI IOF rate.
    const today = businessDate(new Date());
    const request = { amount: secondOffer.min_amount, installments: secondOffer.min_installments };
    const simulation = (await (await simulate(secondOffer.id, request)).json()) as SimulationBody;
    const asMei = simulateLoan({
      requestedAmount: request.amount,
      installments: request.installments,
      monthlyInterestRate: String(secondOffer.monthly_interest_rate),
      releaseDate: today,
      firstDueDate: addDays(today, 30),
      borrower: 'mei',
      iof: stack.config.iof,
    });
    expect(simulation.iof_amount).toBe(asMei.iof_amount);
  });

  it('cancels the offer of a denied customer; a cancelled offer cannot be simulated', async () => {
    const customer = await activeCustomer(stack, api);
    const available = await offerOf(api, customer.id);
    const denied = await fetch(`${stack.baseUrl}/ops/v1/customers/${customer.id}/deny`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${OPS_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ reason: 'Fraud suspected.' }),
    });
    expect(denied.status).toBe(200);
    const cancelled = await offerOf(api, customer.id, 'cancelled');
    expect(cancelled.id).toBe(available.id);
    const [event] = (await eventsOfType('credit_offer.cancelled')).filter(
      (e) => e.data.id === available.id,
    );
    expect(event!.data).toEqual(cancelled);

    const response = await simulate(available.id, {
      amount: available.min_amount,
      installments: available.min_installments,
    });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({
      code: 'credit_offer_unavailable',
      detail: 'The credit offer is cancelled.',
    });
    const workflow = stack.temporal.workflow.getHandle(`credit-offers/${customer.id}`);
    expect(await workflow.result()).toBe('customer_denied');
  });
});

describe('offer expiry and renewal over HTTP', () => {
  let short: TestStack;
  let shortApi: Client;
  beforeAll(async () => {
    short = await startStack({
      env: { OFFER_VALIDITY: '3s', OFFER_RENEWAL_DELAY: '2s', SANDBOX_REVIEW_DELAY: '1h' },
    });
    shortApi = client(
      short,
      await tokenFor(short, (await createPartner(short)).credentials.sandbox),
    );
  });
  afterAll(async () => {
    await short?.stop();
  });

  it('expires at valid_until with credit_offer.expired, refuses simulations, then renews', async () => {
    const customer = await activeCustomer(short, shortApi);
    const first = await offerOf(shortApi, customer.id);
    const expired = await offerOf(shortApi, customer.id, 'expired');
    expect(expired.id).toBe(first.id);
    const refused = await shortApi(`/v3/credit-offers/${first.id}/simulations`, {
      method: 'POST',
      body: { amount: first.min_amount, installments: first.min_installments },
    });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ code: 'credit_offer_unavailable' });

    const renewed = await offerOf(shortApi, customer.id, 'available');
    expect(renewed.id).not.toBe(first.id);
    // OFFER_RENEWAL_DELAY (2 s here) runs from the moment the offer ended: its valid_until.
    expect(Date.parse(renewed.created_at)).toBeGreaterThanOrEqual(
      Date.parse(first.valid_until) + 2_000,
    );

    const events = await eventually(async () => {
      const page = (await (await shortApi('/v3/events?order=asc&limit=100')).json()) as {
        data: EventBody[];
      };
      const offerEvents = page.data.filter((e) => e.type.startsWith('credit_offer.'));
      return offerEvents.length >= 3 ? offerEvents : undefined;
    }, 'three offer events');
    expect(events.map((e) => `${e.type}:${String(e.data.id)}`).slice(0, 3)).toEqual([
      `credit_offer.available:${first.id}`,
      `credit_offer.expired:${first.id}`,
      `credit_offer.available:${renewed.id}`,
    ]);
    expect(events[1]!.data).toEqual(expired);

    // The first run (issue → expiry timer → expire → renewal delay → continue-as-new) is kept
    // for the replay test.
    const firstRun = await short.temporal.workflow
      .getHandle(`credit-offers/${customer.id}`)
      .describe()
      .then((latest) => latest.raw.workflowExecutionInfo?.firstRunId ?? undefined);
    await recordHistory(
      short.temporal.workflow.getHandle(`credit-offers/${customer.id}`, firstRun),
      'credit-offers',
      'expiry-then-renewal',
    );
  });
});
