import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { addDays, businessDate } from '../../src/domain/business-date.js';
import { lastDayWithoutCharges } from '../../src/domain/calendar/business-days.js';
import type { simulationSchema } from '../../src/http/routes/credit-offers/schema.js';
import type {
  loanSchema,
  loanTransactionSchema,
  payoffSchema,
} from '../../src/http/routes/loans/schema.js';
import { activeCustomer, offerOf, submittedCustomer, type OfferBody } from '../helpers/credit.js';
import { recordHistory } from '../helpers/histories.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';

type LoanBody = z.infer<typeof loanSchema>;
type PayoffBody = z.infer<typeof payoffSchema>;
type TransactionBody = z.infer<typeof loanTransactionSchema>;
type SimulationBody = z.infer<typeof simulationSchema>;
interface EventBody {
  id: string;
  type: string;
  data: Record<string, unknown> & {
    id: string;
    installment?: { number: number; due_date: string; amount_due: number };
    payment?: Record<string, unknown>;
  };
}

const DAY = 86_400_000;

let stack: TestStack;
let receiver: Receiver;
let api: Client;
let production: Client;
let endpoint: { id: string; secret: string };

/*
 * Contract §12 over HTTP, with the clock only: every delay is the default or longer (the review
 * and the sandbox disbursement take an hour here, so nothing happens unless the clock moves).
 */
beforeAll(async () => {
  receiver = await startReceiver();
  receiver.answer(() => ({ status: 200 }));
  stack = await startStack({
    env: {
      SANDBOX_REVIEW_DELAY: '1h',
      SANDBOX_DISBURSEMENT_DELAY: '1h',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    },
    webhookCa: receiver.ca,
  });
  const partner = await createPartner(stack);
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
  production = client(stack, await tokenFor(stack, partner.credentials.production));
  endpoint = (await (
    await api('/v3/webhooks/endpoints', {
      method: 'POST',
      body: { url: receiver.url('/clock'), events: ['credit_offer.*', 'loan.*'] },
    })
  ).json()) as { id: string; secret: string };
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

interface ClockBody {
  customer_id: string;
  now: string;
  status: 'advancing' | 'ready';
}

/** Moves the customer's clock and waits until everything that fell due has happened. */
async function advance(customerId: string, to: Date): Promise<ClockBody> {
  const response = await api(`/v3/sandbox/customers/${customerId}/clock`, {
    method: 'POST',
    body: { advance_to: to.toISOString() },
  });
  expect(response.status).toBe(202);
  expect(await response.json()).toEqual({
    customer_id: customerId,
    now: to.toISOString(),
    status: 'advancing',
  });
  return eventually(
    async () => {
      const clock = (await (
        await api(`/v3/sandbox/customers/${customerId}/clock`)
      ).json()) as ClockBody;
      return clock.status === 'ready' ? clock : undefined;
    },
    `the clock of ${customerId} to be ready`,
    60_000,
  );
}

const clockOf = async (customerId: string) =>
  (await (await api(`/v3/sandbox/customers/${customerId}/clock`)).json()) as ClockBody;

const loanOf = async (id: string) => (await (await api(`/v3/loans/${id}`)).json()) as LoanBody;

async function offersOf(customerId: string): Promise<OfferBody[]> {
  const page = (await (
    await api(`/v3/customers/${customerId}/credit-offers?sort=created_at&order=asc`)
  ).json()) as { data: OfferBody[] };
  return page.data;
}

/** Every event of the partner's sandbox, oldest first. */
async function eventLog(): Promise<EventBody[]> {
  const events: EventBody[] = [];
  for (let after = ''; ;) {
    const page = (await (
      await api(`/v3/events?order=asc&limit=100${after && `&starting_after=${after}`}`)
    ).json()) as { data: EventBody[]; has_more: boolean };
    events.push(...page.data);
    if (!page.has_more) return events;
    after = page.data.at(-1)!.id;
  }
}

/** The events about one record (a loan by its id, an offer by its customer), in order. */
async function eventsAbout(match: (event: EventBody) => boolean): Promise<EventBody[]> {
  return (await eventLog()).filter(match);
}

/** Waits until each event reached the webhook endpoint, signed, and returns their ids. */
async function delivered(events: EventBody[]): Promise<void> {
  const ids = events.map((event) => event.id);
  await eventually(async () => {
    const arrived = new Set(
      receiver.requests
        .filter((request) => request.path === '/clock')
        .map(
          (request) =>
            (new Webhook(endpoint.secret).verify(request.body, request.headers) as { id: string })
              .id,
        ),
    );
    return ids.every((id) => arrived.has(id)) ? true : undefined;
  }, `${ids.length} events delivered`);
}

/** Half-even rounding of numerator/denominator (non-negative integers), as §12 rounds. */
function halfEven(numerator: bigint, denominator: bigint): number {
  const quotient = numerator / denominator;
  const twice = (numerator % denominator) * 2n;
  const up = twice > denominator || (twice === denominator && quotient % 2n === 1n);
  return Number(up ? quotient + 1n : quotient);
}

/** An installment's late charges `days` days late (contract §12, default rates: 2 % + 1 % a month). */
function lateCharges(installment: number, days: number): { fee: number; interest: number } {
  return {
    fee: halfEven(BigInt(installment) * 2n, 100n),
    interest: halfEven(BigInt(installment) * BigInt(days), 3000n),
  };
}

/** What an installment owes `days` days late: itself plus its late charges. */
function owedLate(installment: number, days: number): number {
  const { fee, interest } = lateCharges(installment, days);
  return installment + fee + interest;
}

const daysBetween = (from: string, to: string) =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY);
/** Noon in São Paulo on `date` plus `days`. */
const noonAfter = (date: string, days: number) =>
  new Date(Date.parse(`${date}T12:00:00-03:00`) + days * DAY);

describe('the sandbox clock (contract §12)', () => {
  it('is the sandbox’s alone, moves only forward and at most 400 days a call, and answers 422 changing nothing', async () => {
    const { customer } = await submittedCustomer(stack, api);
    const before = await clockOf(customer.id);
    expect(before.status).toBe('ready');
    expect(Math.abs(Date.parse(before.now) - Date.now())).toBeLessThan(60_000);

    const refused = async (body: unknown, path: string) => {
      const response = await api(`/v3/sandbox/customers/${customer.id}/clock`, {
        method: 'POST',
        body,
      });
      expect(response.status).toBe(422);
      const problem = (await response.json()) as { errors: { path: string }[] };
      expect(problem.errors.map((error) => error.path)).toEqual([path]);
    };
    await refused({ advance_to: new Date(Date.now() - DAY).toISOString() }, 'body.advance_to');
    await refused(
      { advance_to: new Date(Date.now() + 401 * DAY).toISOString() },
      'body.advance_to',
    );
    await refused({ advance_to: new Date(Date.now() + DAY).toISOString(), by: 1 }, 'body.by');
    expect((await clockOf(customer.id)).now.slice(0, 10)).toBe(before.now.slice(0, 10));

    // Production has no clock.
    for (const method of ['GET', 'POST'] as const) {
      const response = await production(`/v3/sandbox/customers/${customer.id}/clock`, {
        method,
        ...(method === 'POST'
          ? { body: { advance_to: new Date(Date.now() + DAY).toISOString() } }
          : {}),
      });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'route_not_found' });
    }

    // The sandbox review falls due on the customer's clock: an hour here, passed in one call.
    const moved = await advance(customer.id, new Date(Date.now() + 2 * 3_600_000));
    expect(Date.parse(moved.now)).toBeGreaterThan(Date.now() + 1.9 * 3_600_000);
    const reviewed = (await (await api(`/v3/customers/${customer.id}`)).json()) as {
      status: string;
    };
    expect(reviewed.status).toBe('active');
    // Once moved, the clock goes on from there: never back to real time.
    await refused(
      { advance_to: new Date(Date.now() + 3_600_000).toISOString() },
      'body.advance_to',
    );
  });

  it('an offer advanced past valid_until expires, and a new one follows OFFER_RENEWAL_DELAY later', async () => {
    const customer = await activeCustomer(stack, api);
    const first = await offerOf(api, customer.id);
    const validUntil = Date.parse(first.valid_until);
    // Business dates follow the clock: the offer lasts OFFER_VALIDITY (30 days) from its issue.
    expect(validUntil - Date.now()).toBeGreaterThan(29.9 * DAY);

    await advance(customer.id, new Date(validUntil + DAY + 60_000));
    const offers = await offersOf(customer.id);
    expect(offers.map((offer) => [offer.id, offer.status])).toEqual([
      [first.id, 'expired'],
      [offers[1]!.id, 'available'],
    ]);
    // Renewed at valid_until + 1 day (OFFER_RENEWAL_DELAY), valid for 30 days from then.
    expect(Date.parse(offers[1]!.valid_until)).toBe(validUntil + DAY + 30 * DAY);
    // A simulation of the new offer is released on the clock's date, not the real one.
    const sim = await simulate(offers[1]!, 3);
    const clockToday = businessDate(new Date(validUntil + DAY + 60_000));
    expect(sim.release_date).toBe(clockToday);
    expect(sim.first_due_date).toBe(addDays(clockToday, 30));

    const events = await eventsAbout(
      (event) => event.type.startsWith('credit_offer.') && event.data.customer_id === customer.id,
    );
    expect(events.map((event) => [event.type, event.data.id])).toEqual([
      ['credit_offer.available', first.id],
      ['credit_offer.expired', first.id],
      ['credit_offer.available', offers[1]!.id],
    ]);
    await delivered(events);
  });

  it('a loan nobody signs is cancelled at its deadline on the clock, and its offer is available again', async () => {
    const customer = await activeCustomer(stack, api);
    const offer = await offerOf(api, customer.id);
    const sim = await simulate(offer, 3);
    const loan = await takeLoan(offer, sim);
    const deadline = Date.now() + 7 * DAY; // LOAN_SIGNATURE_DEADLINE, default 7 days

    await advance(customer.id, new Date(deadline + 60_000));
    expect(await loanOf(loan.id)).toMatchObject({
      status: 'cancelled',
      cancellation_reason: 'signature_deadline',
    });
    // Ready means the consequences have happened too: the loan's offer is available again.
    expect((await offersOf(customer.id)).map((o) => [o.id, o.status])).toEqual([
      [offer.id, 'available'],
    ]);

    const events = await eventsAbout((event) => event.data.id === loan.id);
    expect(events.map((event) => event.type)).toEqual(['loan.created', 'loan.cancelled']);
    await delivered(events);
  });

  it('an active loan 45 days past its first due date: that row overdue with §12’s charges, paid with them, the rest paid off', async () => {
    const customer = await activeCustomer(stack, api);
    const offer = await offerOf(api, customer.id);
    const sim = await simulate(offer, 12);
    const loan = await takeLoan(offer, sim);
    const signed = await api(`/v3/sandbox/loans/${loan.id}/signatures`, {
      method: 'POST',
      body: { cpf: customer.cpf },
    });
    expect(signed.status).toBe(200);

    // The sandbox disbursement (an hour here) happens when the clock passes it.
    await advance(customer.id, new Date(Date.now() + 2 * 3_600_000));
    const active = await loanOf(loan.id);
    expect(active).toMatchObject({ status: 'active', overdue_amount: 0, days_overdue: 0 });

    // The rows as released (a release on a later day than priced reprices row 1: contract §13).
    const [row1, row2, row3] = active.schedule;
    await advance(customer.id, noonAfter(row1!.due_date, 45));
    const late = await loanOf(loan.id);
    const today = noonAfter(row1!.due_date, 45).toISOString().slice(0, 10);
    const due1 = owedLate(row1!.installment_amount, 45);
    const due2 = owedLate(row2!.installment_amount, daysBetween(row2!.due_date, today));
    expect(late.schedule.slice(0, 3)).toEqual([
      expect.objectContaining({ number: 1, status: 'overdue', amount_due: due1 }),
      expect.objectContaining({ number: 2, status: 'overdue', amount_due: due2 }),
      expect.objectContaining({
        number: 3,
        status: 'pending',
        amount_due: row3!.installment_amount,
      }),
    ]);
    expect(late).toMatchObject({ days_overdue: 45, overdue_amount: due1 + due2 });

    // The sandbox payment defaults to what the oldest row owes today: installment plus charges.
    const paid = await api(`/v3/sandbox/loans/${loan.id}/payments`, { method: 'POST', body: {} });
    expect(paid.status).toBe(200);
    const afterPayment = (await paid.json()) as LoanBody;
    expect(afterPayment.schedule[0]).toMatchObject({
      status: 'paid',
      amount_due: 0,
      paid_amount: due1,
    });
    expect(afterPayment.schedule[1]).toMatchObject({ status: 'overdue', paid_amount: 0 });
    expect(afterPayment).toMatchObject({
      days_overdue: daysBetween(row2!.due_date, today),
      overdue_amount: due2,
    });
    expect(afterPayment.schedule[0]!.paid_at!.slice(0, 10)).toBe(today);

    const quote = (await (await api(`/v3/loans/${loan.id}/payoff`)).json()) as PayoffBody;
    expect(quote.date).toBe(today);
    expect(quote.rows[0]).toMatchObject({ number: 2, amount_due: due2, present_value: due2 });
    const settled = await api(`/v3/sandbox/loans/${loan.id}/payoff`, { method: 'POST', body: {} });
    expect(settled.status).toBe(200);
    expect(await settled.json()).toMatchObject({ status: 'finished', outstanding_amount: 0 });

    const ledger = (await (await api(`/v3/loans/${loan.id}/transactions`)).json()) as {
      data: TransactionBody[];
    };
    expect(ledger.data.map((entry) => [entry.type, entry.amount])).toEqual([
      ['disbursement', sim.requested_amount],
      ['payment', due1],
      ['payoff', quote.payoff_amount],
    ]);
    // The late payment paid row 1's late interest, its late fee and its installment, at face value.
    const [, payment, payoff] = ledger.data;
    const charges1 = lateCharges(row1!.installment_amount, 45);
    const charges2 = lateCharges(row2!.installment_amount, daysBetween(row2!.due_date, today));
    expect(payment).toMatchObject({
      late_fee_amount: charges1.fee,
      late_interest_amount: charges1.interest,
      discount_amount: 0,
      allocation: [
        {
          installment_number: 1,
          installment_amount: row1!.installment_amount,
          late_fee_amount: charges1.fee,
          late_interest_amount: charges1.interest,
          discount_amount: 0,
        },
      ],
    });
    expect(payment!.principal_amount! + payment!.interest_amount!).toBe(row1!.installment_amount);
    // The payoff: row 2 with its charges, the rest at present value (the discount the quote's).
    expect(payoff).toMatchObject({
      late_fee_amount: charges2.fee,
      late_interest_amount: charges2.interest,
      discount_amount: quote.discount_amount,
    });
    expect(payoff!.allocation!.map((part) => part.installment_number)).toEqual(
      quote.rows.map((row) => row.number),
    );
    expect(payoff!.allocation![0]).toMatchObject({
      installment_number: 2,
      installment_amount: row2!.installment_amount,
      late_fee_amount: charges2.fee,
      late_interest_amount: charges2.interest,
      discount_amount: 0,
    });
    expect(
      payoff!.principal_amount! +
        payoff!.interest_amount! +
        payoff!.late_fee_amount! +
        payoff!.late_interest_amount!,
    ).toBe(payoff!.amount);
    for (const entry of [payment!, payoff!]) expect(entry.reference).toMatch(/^sbx_[0-9a-f]{24}$/);
    // Every centavo of principal is paid, and no more.
    expect(payment!.principal_amount! + payoff!.principal_amount!).toBe(active.principal_amount);

    const events = await eventsAbout((event) => event.data.id === loan.id);
    expect(events.map((event) => [event.type, event.data.installment?.number])).toEqual([
      ['loan.created', undefined],
      ['loan.signature_received', undefined],
      ['loan.processing', undefined],
      ['loan.active', undefined],
      ['loan.installment_overdue', 1],
      ['loan.installment_overdue', 2],
      ['loan.payment_received', undefined],
      // The payoff is a payment of the payoff amount (contract §13): it is received, then finishes.
      ['loan.payment_received', undefined],
      ['loan.finished', undefined],
    ]);
    // Overdue once its last day without charges ended (the due date, or the next business day
    // when the due date is not one), owing the late charges of the days since the due date.
    const markedOn = addDays(lastDayWithoutCharges(row1!.due_date), 1);
    expect(events[4]!.data.installment).toEqual({
      number: 1,
      due_date: row1!.due_date,
      amount_due: owedLate(row1!.installment_amount, daysBetween(row1!.due_date, markedOn)),
    });
    expect(events.slice(6, 8).map((event) => event.data.payment)).toEqual(
      [payment!, payoff!].map((entry) => ({
        amount: entry.amount,
        paid_at: entry.occurred_at,
        reference: entry.reference,
        apply_to: 'next',
        principal_amount: entry.principal_amount,
        interest_amount: entry.interest_amount,
        late_fee_amount: entry.late_fee_amount,
        late_interest_amount: entry.late_interest_amount,
        discount_amount: entry.discount_amount,
        installment_number: null,
      })),
    );
    await delivered(events);
    await recordHistory(
      stack.temporal.workflow.getHandle(`sandbox-clock/${customer.id}/2`),
      'sandbox-clock',
      'ready',
    );
    // A loan's history through its due-date timers (overdue rows, a late payment, a payoff).
    await recordHistory(
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'overdue-after-holiday-paid-late-to-finished',
    );
  });
});

async function simulate(offer: OfferBody, installments: number): Promise<SimulationBody> {
  const response = await api(`/v3/credit-offers/${offer.id}/simulations`, {
    method: 'POST',
    body: { amount: offer.min_amount, installments },
  });
  expect(response.status).toBe(201);
  return (await response.json()) as SimulationBody;
}

async function takeLoan(offer: OfferBody, sim: SimulationBody): Promise<LoanBody> {
  const response = await api('/v3/loans', {
    method: 'POST',
    body: {
      credit_offer_id: offer.id,
      simulation_id: sim.id,
      disbursement_account: { type: 'pix', pix_key: '+5511987654321' },
    },
  });
  expect(response.status).toBe(201);
  return (await response.json()) as LoanBody;
}
