import { eq, isNotNull, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { z } from 'zod';
import { execFile } from 'node:child_process';
import { createDatabase } from '../../src/db/client.js';
import { ledgerCheckReport, reconcileLedger, trialBalance } from '../../src/db/queries/ledger.js';
import { repaymentOf } from '../../src/db/queries/loans.js';
import { ledgerEntries, loans, simulations } from '../../src/db/schema/index.js';
import type { simulationSchema } from '../../src/http/routes/credit-offers/schema.js';
import type { loanSchema, payoffSchema } from '../../src/http/routes/loans/schema.js';
import { Decimal as DecimalJs } from 'decimal.js';
import type { loanTransactionSchema } from '../../src/http/routes/loans/schema.js';
import { addDays, businessDate, daysBetween } from '../../src/domain/business-date.js';
import { activeCustomer, activeLoan, offerOf, type OfferBody } from '../helpers/credit.js';
import type { CustomerBody } from '../helpers/customers.js';
import { fakeCpf } from '../helpers/customers.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { recordHistory } from '../helpers/histories.js';
import { decreeIof, repricedPrincipalByHand } from '../helpers/iof.js';
import { SigningBrowser } from '../helpers/hosted.js';

type LoanBody = z.infer<typeof loanSchema>;
type PayoffBody = z.infer<typeof payoffSchema>;
type SimulationBody = z.infer<typeof simulationSchema>;
type Transaction = z.infer<typeof loanTransactionSchema>;
/** The test's own decimals: 40 digits, half-even, independent of the service's. */
const Decimal = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_EVEN });
const halfEven = (value: InstanceType<typeof Decimal>) =>
  value.toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber();
interface Problem {
  code: string;
  detail: string;
  errors?: { path: string; code: string; message: string }[];
}

let stack: TestStack;
/** The test's own partner: other files share the database (and its ledger) with this one. */
let partnerId: string;
let api: Client;
let production: Client;
let otherPartner: Client;
let customer: CustomerBody;
let offer: OfferBody;
let sim: SimulationBody;

beforeAll(async () => {
  // The sandbox's own disbursement never comes here (the release window ends first), so ops
  // report it, as in production, whenever the test says.
  stack = await startStack({
    env: { SANDBOX_REVIEW_DELAY: '1h', SANDBOX_DISBURSEMENT_DELAY: '60d' },
  });
  const partner = await createPartner(stack);
  partnerId = partner.partner_id;
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
  production = client(stack, await tokenFor(stack, partner.credentials.production));
  otherPartner = client(
    stack,
    await tokenFor(stack, (await createPartner(stack, 'Other')).credentials.sandbox),
  );
  customer = await activeCustomer(stack, api);
  offer = await offerOf(api, customer.id);
  sim = (await (
    await api(`/v3/credit-offers/${offer.id}/simulations`, {
      method: 'POST',
      body: { amount: offer.min_amount, installments: 3 },
    })
  ).json()) as SimulationBody;
});
afterAll(async () => {
  await stack?.stop();
});

const pix = (pix_key: string) => ({ type: 'pix', pix_key });
const create = (body: Record<string, unknown>, as: Client = api) =>
  as('/v3/loans', { method: 'POST', body });
const valid = () => ({
  credit_offer_id: offer.id,
  simulation_id: sim.id,
  disbursement_account: pix(customer.email),
});
const problem = async (response: Response) => (await response.json()) as Problem;
/** This file's partner's loans (other files write loans into the same database at the time). */
const loanCount = async () =>
  (await stack.database.db.select().from(loans).where(eq(loans.partnerId, partnerId))).length;

describe('POST /v3/loans refuses what contract §8 refuses, and writes nothing', () => {
  it('422: each bad field named once — pix keys of every kind, bank account fields, signers', async () => {
    const before = await loanCount();
    const cases: [Record<string, unknown>, string][] = [
      [pix('not a key'), 'body.disbursement_account.pix_key'],
      [pix('+1202555014'), 'body.disbursement_account.pix_key'], // not Brazilian
      [pix('123.456.789-00'), 'body.disbursement_account.pix_key'], // cpf check digits
      [pix('11.222.333/0001-00'), 'body.disbursement_account.pix_key'], // cnpj check digits
      [pix('0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f'), 'body.disbursement_account.pix_key'],
      [pix(`${'a'.repeat(66)}@example.com`), 'body.disbursement_account.pix_key'], // 78 > 77
      [
        {
          type: 'bank_account',
          bank_code: '34',
          branch: '0001',
          account_number: '1-2',
          account_type: 'checking',
        },
        'body.disbursement_account.bank_code',
      ],
      [
        {
          type: 'bank_account',
          bank_code: '341',
          branch: '00001',
          account_number: '1-2',
          account_type: 'checking',
        },
        'body.disbursement_account.branch',
      ],
      [
        {
          type: 'bank_account',
          bank_code: '341',
          branch: '0001',
          account_number: '12345',
          account_type: 'checking',
        },
        'body.disbursement_account.account_number',
      ],
      [
        {
          type: 'bank_account',
          bank_code: '341',
          branch: '0001',
          account_number: '1-2',
          account_type: 'gold',
        },
        'body.disbursement_account.account_type',
      ],
    ];
    for (const [account, path] of cases) {
      const response = await create({ ...valid(), disbursement_account: account });
      expect(response.status, JSON.stringify(account)).toBe(422);
      expect((await problem(response)).errors?.map((e) => e.path)).toEqual([path]);
    }
    const signer = () => ({ name: 'Ana', cpf: fakeCpf(), email: 'ana@example.com' });
    const twice = signer();
    for (const [signers, path] of [
      [[signer(), signer(), signer(), signer(), signer()], 'body.signers'],
      [[twice, { ...twice, name: 'Other' }], 'body.signers.1.cpf'],
      [[{ ...signer(), cpf: '11111111111' }], 'body.signers.0.cpf'],
      [[{ ...signer(), email: 'nope' }], 'body.signers.0.email'],
      [[{ ...signer(), cpf: customer.cpf }], 'body.signers.0.cpf'],
    ] as const) {
      const response = await create({ ...valid(), signers });
      expect(response.status).toBe(422);
      expect((await problem(response)).errors?.map((e) => e.path)).toEqual([path]);
    }
    const unknown = await create({ ...valid(), interest: 0 });
    expect(unknown.status).toBe(422);
    expect(await loanCount()).toBe(before);
    expect((await offerOf(api, customer.id)).id).toBe(offer.id); // still available
  });

  it('every accepted pix key kind is stored normalized with its kind', async () => {
    const { parsePixKey } = await import('../../src/domain/loans/disbursement-account.js');
    expect(parsePixKey('529.982.247-25')).toEqual({ key: '52998224725', type: 'cpf' });
    expect(parsePixKey('11.222.333/0001-81')).toEqual({ key: '11222333000181', type: 'cnpj' });
    expect(parsePixKey('Ana@Example.COM')).toEqual({ key: 'ana@example.com', type: 'email' });
    expect(parsePixKey('+5511987654321')).toEqual({ key: '+5511987654321', type: 'phone' });
    expect(parsePixKey('0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9')).toEqual({
      key: '0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9',
      type: 'evp',
    });
  });

  it('404 for an unknown offer, a simulation of another offer, and another tenant’s offer', async () => {
    const other = await activeCustomer(stack, api);
    const otherOffer = await offerOf(api, other.id);
    const otherSim = (await (
      await api(`/v3/credit-offers/${otherOffer.id}/simulations`, {
        method: 'POST',
        body: { amount: otherOffer.min_amount, installments: 3 },
      })
    ).json()) as SimulationBody;
    const cases: [Record<string, unknown>, Client, string][] = [
      [{ ...valid(), credit_offer_id: `co_${'0'.repeat(32)}` }, api, 'credit_offer_not_found'],
      [{ ...valid(), simulation_id: otherSim.id }, api, 'simulation_not_found'],
      [{ ...valid(), simulation_id: `sim_${'0'.repeat(32)}` }, api, 'simulation_not_found'],
      [valid(), otherPartner, 'credit_offer_not_found'],
      [valid(), production, 'credit_offer_not_found'],
    ];
    for (const [body, as, code] of cases) {
      const response = await create(body, as);
      expect(response.status).toBe(404);
      expect((await problem(response)).code).toBe(code);
    }
  });

  it('409 simulation_expired, then 409 credit_offer_unavailable once a loan took the offer', async () => {
    const expired = (await (
      await api(`/v3/credit-offers/${offer.id}/simulations`, {
        method: 'POST',
        body: { amount: offer.min_amount, installments: 3 },
      })
    ).json()) as SimulationBody;
    await stack.database.db
      .update(simulations)
      .set({ validUntil: new Date(Date.now() - 1000) })
      .where(eq(simulations.id, expired.id));
    const late = await create({ ...valid(), simulation_id: expired.id });
    expect(late.status).toBe(409);
    expect((await problem(late)).code).toBe('simulation_expired');

    const first = await create(valid());
    expect(first.status).toBe(201);
    const second = await create(valid());
    expect(second.status).toBe(409);
    const refused = await problem(second);
    expect(refused.code).toBe('credit_offer_unavailable');
    expect(refused.detail).toContain('accepted');
  });

  it('two loans racing for one offer: one is created, the other refused', async () => {
    const racer = await activeCustomer(stack, api);
    const racerOffer = await offerOf(api, racer.id);
    const racerSim = (await (
      await api(`/v3/credit-offers/${racerOffer.id}/simulations`, {
        method: 'POST',
        body: { amount: racerOffer.min_amount, installments: 3 },
      })
    ).json()) as SimulationBody;
    const body = {
      credit_offer_id: racerOffer.id,
      simulation_id: racerSim.id,
      disbursement_account: pix(racer.email),
    };
    const statuses = (await Promise.all([create(body), create(body), create(body)])).map(
      (r) => r.status,
    );
    expect(statuses.sort()).toEqual([201, 409, 409]);
    const written = await stack.database.db
      .select()
      .from(loans)
      .where(eq(loans.creditOfferId, racerOffer.id));
    expect(written).toHaveLength(1);
  });
});

describe('loan commands', () => {
  let loan: LoanBody;
  beforeAll(async () => {
    const borrower = await activeCustomer(stack, api);
    const borrowerOffer = await offerOf(api, borrower.id);
    const borrowerSim = (await (
      await api(`/v3/credit-offers/${borrowerOffer.id}/simulations`, {
        method: 'POST',
        body: { amount: borrowerOffer.min_amount, installments: 3 },
      })
    ).json()) as SimulationBody;
    loan = (await (
      await create({
        credit_offer_id: borrowerOffer.id,
        simulation_id: borrowerSim.id,
        disbursement_account: pix(borrower.email),
      })
    ).json()) as LoanBody;
  });

  const ops = (path: string, body: Record<string, unknown>) =>
    fetch(`${stack.baseUrl}/ops/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('the sandbox helpers do not exist for a production token', async () => {
    const response = await production(`/v3/sandbox/loans/${loan.id}/signatures`, {
      method: 'POST',
      body: { cpf: loan.signers[0]!.cpf },
    });
    expect(response.status).toBe(404);
  });

  it('ops record payments of any amount under a reference; what the status, the reference or the rules forbid is refused and changes nothing', async () => {
    const pay = (body: Record<string, unknown>) => ops(`/loans/${loan.id}/payments`, body);
    const transactions = async () =>
      ((await (await api(`/v3/loans/${loan.id}/transactions`)).json()) as { data: Transaction[] })
        .data;
    expect((await pay({ amount: 1, reference: 'early' })).status).toBe(409); // not active
    expect((await ops(`/loans/${loan.id}/disbursement`, { outcome: 'confirmed' })).status).toBe(
      409,
    );
    const stranger = await api(`/v3/sandbox/loans/${loan.id}/signatures`, {
      method: 'POST',
      body: { cpf: fakeCpf() },
    });
    expect(stranger.status).toBe(422);
    expect((await problem(stranger)).errors?.map((e) => e.path)).toEqual(['body.cpf']);
    // The signing page, as a browser uses it: a code for the signer, then the signature.
    const browser = new SigningBrowser(stack.baseUrl, loan.signing_url);
    await browser.identify(loan.signers[0]!.cpf, { sandbox: true });
    const page = await browser.sign();
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Assinatura registrada');
    const processing = (await (await api(`/v3/loans/${loan.id}`)).json()) as LoanBody;
    expect(processing.status).toBe('processing');
    const confirmed = await ops(`/loans/${loan.id}/disbursement`, { outcome: 'confirmed' });
    expect(confirmed.status).toBe(200);
    expect(((await confirmed.json()) as LoanBody).status).toBe('active');

    // Ops name every payment; the amount is at most the payoff amount of its day.
    const unnamed = await pay({ amount: 10_000 });
    expect(unnamed.status).toBe(422);
    expect((await problem(unnamed)).errors?.map((e) => e.path)).toEqual(['body.reference']);
    const quote = (await (await api(`/v3/loans/${loan.id}/payoff`)).json()) as PayoffBody;
    const above = await pay({ amount: quote.payoff_amount + 1, reference: 'too-much' });
    expect(above.status).toBe(422);
    const aboveBody = await problem(above);
    expect(aboveBody.errors?.[0]).toMatchObject({
      path: 'body.amount',
      code: 'above_payoff_amount',
    });
    expect(aboveBody.errors?.[0]!.message).toContain(`${quote.payoff_amount} centavos`);
    const future = await pay({
      amount: 10_000,
      reference: 'future',
      paid_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(future.status).toBe(422);
    expect(await transactions()).toHaveLength(1); // the disbursement alone

    // R$ 50.00 before row 1's due date pays part of it: what it owes falls by the part carried
    // to its due date at the contract rate, (1 + i)^(d/30). Paid on the release day, row 1 is due
    // 30 days later, and 5,000 carried 30 days at any of the sandbox's rates (1.99 %, 2.49 %,
    // 2.99 %, 3.49 %) comes to a half-centavo: a tie that half-even settles (the review found
    // ties rounded up when (1 + i) was rebuilt from its 30th root).
    const paid = await pay({ amount: 5_000, reference: 'E2E-partial-1' });
    expect(paid.status).toBe(200);
    const afterFirst = (await paid.json()) as LoanBody;
    const [payment] = (await transactions()).slice(1);
    const days = daysBetween(
      businessDate(new Date(payment!.occurred_at)),
      loan.schedule[0]!.due_date,
    );
    // Kept exact on the row, rounded once where shown.
    const carriedExactly = new Decimal(5_000).times(
      new Decimal(1).plus(loan.monthly_interest_rate).pow(new Decimal(days).div(30)),
    );
    const carried = halfEven(carriedExactly);
    expect(afterFirst).toMatchObject({ paid_installments: 0 });
    expect(afterFirst.schedule[0]).toMatchObject({
      status: 'pending',
      paid_amount: 5_000,
      amount_due: halfEven(new Decimal(loan.schedule[0]!.installment_amount).minus(carriedExactly)),
      paid_at: null,
    });
    expect(payment).toMatchObject({
      type: 'payment',
      amount: 5_000,
      reference: 'E2E-partial-1',
      discount_amount: carried - 5_000,
      late_fee_amount: 0,
      late_interest_amount: 0,
      allocation: [
        {
          installment_number: 1,
          installment_amount: 5_000,
          late_fee_amount: 0,
          late_interest_amount: 0,
          discount_amount: carried - 5_000,
        },
      ],
    });
    expect(payment!.principal_amount! + payment!.interest_amount!).toBe(5_000);

    // The same payment again (a retry after a lost answer): 200, nothing recorded.
    const again = await pay({ amount: 5_000, reference: 'E2E-partial-1' });
    expect(again.status).toBe(200);
    expect(((await again.json()) as LoanBody).schedule[0]).toEqual(afterFirst.schedule[0]);
    // Anything else under that reference: 409, nothing recorded.
    for (const other of [
      { amount: 5_001, reference: 'E2E-partial-1' },
      { amount: 5_000, reference: 'E2E-partial-1', paid_at: payment!.created_at },
    ]) {
      const conflict = await pay(other);
      expect(conflict.status).toBe(409);
      expect((await problem(conflict)).code).toBe('payment_reference_conflict');
    }
    expect(await transactions()).toHaveLength(2);

    // Never dated before the latest payment (contract §13), though after the disbursement.
    const backdated = await pay({
      amount: 10_000,
      reference: 'backdated',
      paid_at: new Date(new Date(payment!.occurred_at).getTime() - 1).toISOString(),
    });
    expect(backdated.status).toBe(422);
    expect((await problem(backdated)).errors?.[0]).toMatchObject({
      path: 'body.paid_at',
      code: 'before_latest_payment',
    });
    const cancel = await api(`/v3/loans/${loan.id}/cancel`, { method: 'POST', body: {} });
    expect(cancel.status).toBe(409);
    expect(
      (await ops(`/loans/ln_${'0'.repeat(32)}/payments`, { amount: 1, reference: 'x' })).status,
    ).toBe(404);
    expect(await transactions()).toHaveLength(2);
  });

  it('forty payments sent at once without paid_at: each is booked, dated when its turn came, in order', async () => {
    // The review saw 28 of 41 refused (422 before_latest_payment): each took "now" in the API, and
    // the workflow booked them in another order.
    const burst = await activeLoan(stack, api, { opsToken: OPS_TOKEN });
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        ops(`/loans/${burst.id}/payments`, { amount: 1_000, reference: `burst-${n}` }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    const booked = (
      (await (await api(`/v3/loans/${burst.id}/transactions?limit=100`)).json()) as {
        data: Transaction[];
      }
    ).data.filter((t) => t.type === 'payment');
    expect(booked).toHaveLength(40);
    expect(new Set(booked.map((t) => t.reference)).size).toBe(40);
    // Booked in order: each dated no earlier than the one booked before it.
    const dates = booked.map((t) => Date.parse(t.occurred_at));
    expect(dates).toEqual([...dates].sort((a, b) => a - b));
    const after = (await (await api(`/v3/loans/${burst.id}`)).json()) as LoanBody;
    expect(after.schedule.reduce((sum, row) => sum + row.paid_amount, 0)).toBe(40_000);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    await recordHistory(
      stack.temporal.workflow.getHandle(`loan/${burst.id}`),
      'loan',
      'payments-without-paid-at-booked-at-their-turn',
    );
  });

  it('lists loans by customer and status; other tenants see none of it', async () => {
    const page = (await (
      await api(`/v3/loans?customer_id=${loan.customer_id}&status=active`)
    ).json()) as { data: LoanBody[] };
    expect(page.data.map((l) => l.id)).toEqual([loan.id]);
    const productionPage = (await (await production('/v3/loans')).json()) as { data: unknown[] };
    expect(productionPage.data).toEqual([]);
    expect((await otherPartner(`/v3/loans/${loan.id}`)).status).toBe(404);
    expect((await otherPartner(`/v3/loans/${loan.id}/contract`)).status).toBe(404);
    expect((await otherPartner(`/v3/loans/${loan.id}/transactions`)).status).toBe(404);
    expect((await production(`/v3/loans/${loan.id}`)).status).toBe(404);
    expect((await otherPartner(`/v3/loans/${loan.id}/payoff`)).status).toBe(404);
  });

  it('quotes an early settlement, settles it in one payoff transaction, and finishes the loan', async () => {
    const active = (await (await api(`/v3/loans/${loan.id}`)).json()) as LoanBody;
    expect(active).toMatchObject({ status: 'active', overdue_amount: 0, days_overdue: 0 });
    expect(active.schedule.map((row) => row.status)).toEqual(
      active.schedule.map((_, index) => (index < active.paid_installments ? 'paid' : 'pending')),
    );
    expect(active.schedule[1]!.amount_due).toBe(active.schedule[1]!.installment_amount);
    const today = businessDate(new Date());

    // Each row at its value today: row 1 (paid in part) on what is left of it; the others whole,
    // discounted at the contract rate on calendar days.
    const quote = (await (await api(`/v3/loans/${loan.id}/payoff`)).json()) as PayoffBody;
    const valueToday = (amount: number, dueDate: string) =>
      halfEven(
        new Decimal(amount).div(
          new Decimal(1).plus(active.monthly_interest_rate).pow(daysBetween(today, dueDate) / 30),
        ),
      );
    expect(quote.rows.map(({ present_value: _, ...row }) => row)).toEqual(
      active.schedule.map((row) => ({
        number: row.number,
        due_date: row.due_date,
        amount_due: row.amount_due,
      })),
    );
    for (const row of quote.rows.slice(1, -1))
      expect(row.present_value).toBe(valueToday(row.amount_due, row.due_date));
    // The payoff is never below the principal still owed (a discount is interest not charged):
    // on the release day the rows' rounded values can fall a centavo or so short of it, and the
    // newest row carries the difference.
    const paidSoFar = (
      (await (await api(`/v3/loans/${loan.id}/transactions`)).json()) as { data: Transaction[] }
    ).data.reduce((sum, t) => sum + (t.principal_amount ?? 0), 0);
    const principalOwed = active.principal_amount - paidSoFar;
    const newest = quote.rows.at(-1)!;
    const newestValue = valueToday(newest.amount_due, newest.due_date);
    expect(quote.payoff_amount).toBeGreaterThanOrEqual(principalOwed);
    if (newest.present_value !== newestValue) {
      expect(newest.present_value).toBeGreaterThan(newestValue);
      expect(quote.payoff_amount).toBe(principalOwed);
    }
    expect(
      Math.abs(
        quote.rows[0]!.present_value -
          valueToday(quote.rows[0]!.amount_due, quote.rows[0]!.due_date),
      ),
    ).toBeLessThanOrEqual(1);
    expect(quote).toMatchObject({
      loan_id: loan.id,
      date: today,
      payoff_amount: quote.rows.reduce((sum, row) => sum + row.present_value, 0),
    });
    // Every row is due after today: the payoff is less than what is left, and less further out.
    expect(quote.payoff_amount).toBeLessThan(active.outstanding_amount);
    expect(quote.payoff_amount + quote.discount_amount).toBe(active.outstanding_amount);
    const later = (await (
      await api(`/v3/loans/${loan.id}/payoff?date=${addDays(today, 30)}`)
    ).json()) as PayoffBody;
    expect(later.payoff_amount).toBeGreaterThan(quote.payoff_amount);
    for (const date of [addDays(today, -1), addDays(today, 31), '2026-02-30']) {
      const bad = await api(`/v3/loans/${loan.id}/payoff?date=${date}`);
      expect(bad.status).toBe(422);
      expect((await problem(bad)).errors?.map((e) => e.path)).toEqual(['query.date']);
    }

    // The sandbox twin names the payment itself when the partner does not.
    const settled = await api(`/v3/sandbox/loans/${loan.id}/payoff`, { method: 'POST', body: {} });
    expect(settled.status).toBe(200);
    const finished = (await settled.json()) as LoanBody;
    expect(finished).toMatchObject({
      status: 'finished',
      outstanding_amount: 0,
      paid_installments: finished.installments,
    });
    expect(finished.schedule.every((row) => row.status === 'paid' && row.amount_due === 0)).toBe(
      true,
    );
    const ledger = (await (await api(`/v3/loans/${loan.id}/transactions`)).json()) as {
      data: Transaction[];
    };
    expect(ledger.data.at(-1)).toMatchObject({
      type: 'payoff',
      amount: quote.payoff_amount,
      discount_amount: quote.discount_amount,
      installment_number: null,
    });
    expect(ledger.data.at(-1)!.reference).toMatch(/^sbx_[0-9a-f]{24}$/);
    expect(ledger.data.filter((t) => t.type === 'payoff')).toHaveLength(1);
    // Every centavo of principal is paid, and no more.
    const payments = ledger.data.filter((t) => t.type !== 'disbursement');
    expect(payments.reduce((sum, t) => sum + t.principal_amount!, 0)).toBe(
      finished.principal_amount,
    );
    expect((await api(`/v3/loans/${loan.id}/payoff`)).status).toBe(409);
    expect((await ops(`/loans/${loan.id}/payoff`, { reference: 'late' })).status).toBe(409);
  });
});

describe('the release date and the disbursement claim (contract §13)', () => {
  const ops = (path: string) =>
    fetch(`${stack.baseUrl}/ops/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(path.endsWith('/claim') ? undefined : { outcome: 'confirmed' }),
    });

  /** A signed sandbox loan of 3 rows, `processing`, priced today (the customer's clock). */
  async function processingLoan(): Promise<LoanBody> {
    const borrower = await activeCustomer(stack, api);
    const borrowerOffer = await offerOf(api, borrower.id);
    const simulation = (await (
      await api(`/v3/credit-offers/${borrowerOffer.id}/simulations`, {
        method: 'POST',
        body: { amount: borrowerOffer.min_amount, installments: 3 },
      })
    ).json()) as SimulationBody;
    const created = (await (
      await create({
        credit_offer_id: borrowerOffer.id,
        simulation_id: simulation.id,
        disbursement_account: pix(borrower.email),
      })
    ).json()) as LoanBody;
    const signed = await api(`/v3/sandbox/loans/${created.id}/signatures`, {
      method: 'POST',
      body: { cpf: created.signers[0]!.cpf },
    });
    expect(((await signed.json()) as LoanBody).status).toBe('processing');
    return created;
  }

  /** Moves the customer's clock by `days` and waits until it is ready. */
  async function advanceDays(customerId: string, days: number): Promise<void> {
    const now = (await (await api(`/v3/sandbox/customers/${customerId}/clock`)).json()) as {
      now: string;
    };
    const to = new Date(new Date(now.now).getTime() + days * 86_400_000);
    const response = await api(`/v3/sandbox/customers/${customerId}/clock`, {
      method: 'POST',
      body: { advance_to: to.toISOString() },
    });
    expect(response.status).toBe(202);
    await eventually(async () => {
      const clock = (await (await api(`/v3/sandbox/customers/${customerId}/clock`)).json()) as {
        status: string;
      };
      return clock.status === 'ready' ? true : undefined;
    }, 'the clock ready');
  }

  it('a disbursement confirmed 3 days late takes the interest and IOF of those days off row 1', async () => {
    const loan = await processingLoan();
    expect(loan).toMatchObject({ disbursement_status: 'pending', release_adjustment: null });
    await advanceDays(loan.customer_id, 3);
    const confirmed = await ops(`/loans/${loan.id}/disbursement`);
    expect(confirmed.status).toBe(200);
    const active = (await confirmed.json()) as LoanBody;
    const released = addDays(loan.release_date, 3);
    const [before, after] = [loan.schedule[0]!, active.schedule[0]!];
    // Row 1's interest runs from the release on the new principal, (1 + i)^(d/30) − 1; its
    // principal part falls by the IOF credit, so it ends on the balance it had.
    const days = daysBetween(released, before.due_date);
    const interest = halfEven(
      new Decimal(active.principal_amount).times(
        new Decimal(1)
          .plus(loan.monthly_interest_rate)
          .pow(days / 30)
          .minus(1),
      ),
    );
    const iofCredit = loan.principal_amount - active.principal_amount;
    expect(iofCredit).toBeGreaterThan(0);
    expect(after).toMatchObject({
      interest_amount: interest,
      principal_amount: before.principal_amount - iofCredit,
      balance_amount: before.balance_amount,
      installment_amount: interest + before.principal_amount - iofCredit,
    });
    expect(active).toMatchObject({
      status: 'active',
      disbursement_status: 'confirmed',
      release_date: released,
      iof_amount: loan.iof_amount - iofCredit,
      installment_amount: loan.installment_amount,
      release_adjustment: {
        priced_release_date: loan.release_date,
        interest_credit_amount: before.interest_amount - interest,
        iof_credit_amount: iofCredit,
        row1_installment_before: before.installment_amount,
        row1_installment_after: after.installment_amount,
      },
    });
    expect(active.schedule.slice(1)).toEqual(
      loan.schedule.slice(1).map((row) => ({
        ...row,
        status: 'pending',
        amount_due: row.installment_amount,
        paid_amount: 0,
        paid_at: null,
      })),
    );
    // The CET is solved again on the flows from the release (the same flat IOF over a shorter
    // first period can raise it); test/unit/release-repricing.test.ts checks its figure.
    expect(active.cet_annual).not.toBe(loan.cet_annual);
    // loan.active carries the final figures.
    const log = (await (
      await api(`/v3/events?resource_id=${loan.id}&order=asc&limit=100`)
    ).json()) as {
      data: { type: string; data: LoanBody }[];
    };
    const activeEvent = log.data.find((e) => e.type === 'loan.active' && e.data.id === loan.id);
    expect(activeEvent!.data.release_date).toBe(released);
    expect(activeEvent!.data.schedule[0]!.installment_amount).toBe(after.installment_amount);
  });

  it('claimed in time and confirmed 4 days before the first due date, it is priced from that day', async () => {
    // The review's case: priced as released on the window's last day, row 1 charged interest and
    // IOF for the 3 days before the money arrived.
    const loan = await processingLoan();
    expect((await ops(`/loans/${loan.id}/disbursement/claim`)).status).toBe(200);
    await advanceDays(loan.customer_id, daysBetween(loan.release_date, loan.first_due_date) - 4);
    const active = (await (await ops(`/loans/${loan.id}/disbursement`)).json()) as LoanBody;
    const released = addDays(loan.first_due_date, -4);
    expect(active).toMatchObject({ status: 'active', release_date: released });
    // The IOF is the decree's on the repriced amortization of each row, for the actual days.
    expect(active.principal_amount).toBe(
      repricedPrincipalByHand(loan, released, decreeIof.flat, decreeIof.dailyIndividual),
    );
    expect(active.schedule[0]!.interest_amount).toBe(
      halfEven(
        new Decimal(active.principal_amount).times(
          new Decimal(1).plus(loan.monthly_interest_rate).pow(new Decimal(4).div(30)).minus(1),
        ),
      ),
    );
    expect(active.schedule[0]!.balance_amount).toBe(loan.schedule[0]!.balance_amount);
  });

  it('once ops claim the payout the partner cannot cancel; claiming again answers the loan', async () => {
    const loan = await processingLoan();
    const claimed = await ops(`/loans/${loan.id}/disbursement/claim`);
    expect(claimed.status).toBe(200);
    expect(((await claimed.json()) as LoanBody).disbursement_status).toBe('claimed');
    const cancel = await api(`/v3/loans/${loan.id}/cancel`, { method: 'POST', body: {} });
    expect(cancel.status).toBe(409);
    expect((await problem(cancel)).code).toBe('invalid_state');
    expect((await ops(`/loans/${loan.id}/disbursement/claim`)).status).toBe(200);
    const confirmed = (await (await ops(`/loans/${loan.id}/disbursement`)).json()) as LoanBody;
    expect(confirmed).toMatchObject({ status: 'active', disbursement_status: 'confirmed' });
    expect((await ops(`/loans/${loan.id}/disbursement/claim`)).status).toBe(409);
    await recordHistory(
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'claimed-disbursement-confirmed',
    );
  });

  it('a cancel and a claim sent together: one wins, the other is 409, and the loan agrees', async () => {
    for (let round = 0; round < 2; round++) {
      const loan = await processingLoan();
      const claim = () => ops(`/loans/${loan.id}/disbursement/claim`);
      const cancel = () => api(`/v3/loans/${loan.id}/cancel`, { method: 'POST', body: {} });
      const [a, b] = round === 0 ? [claim(), cancel()] : [cancel(), claim()];
      const [first, second] = await Promise.all([a, b]);
      const [claimStatus, cancelStatus] =
        round === 0 ? [first.status, second.status] : [second.status, first.status];
      expect([claimStatus, cancelStatus].sort()).toEqual([200, 409]);
      const after = (await (await api(`/v3/loans/${loan.id}`)).json()) as LoanBody;
      expect(after).toMatchObject(
        claimStatus === 200
          ? { status: 'processing', disbursement_status: 'claimed' }
          : { status: 'cancelled', disbursement_status: 'pending' },
      );
    }
  });

  it('unclaimed 7 days before the first due date, the loan is cancelled (release_window_passed)', async () => {
    const loan = await processingLoan();
    const toWindowEnd = daysBetween(loan.release_date, loan.first_due_date) - 6;
    await advanceDays(loan.customer_id, toWindowEnd);
    const after = (await (await api(`/v3/loans/${loan.id}`)).json()) as LoanBody;
    expect(after).toMatchObject({
      status: 'cancelled',
      cancellation_reason: 'release_window_passed',
      disbursement_status: 'pending',
    });
    expect((await ops(`/loans/${loan.id}/disbursement/claim`)).status).toBe(409);
    // The offer is free again, as after any cancellation.
    const offer = (await (
      await api(`/v3/credit-offers/${after.credit_offer_id}`)
    ).json()) as OfferBody;
    expect(offer.status).toBe('available');
    await recordHistory(
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'release-window-passed',
    );
  });
});

describe('the double-entry ledger (contract §13)', () => {
  const opsGet = async <T>(path: string) =>
    (await (
      await fetch(`${stack.baseUrl}/ops/v1${path}`, {
        headers: { authorization: `Bearer ${OPS_TOKEN}` },
      })
    ).json()) as T;
  const sumOf = (entries: Transaction['entries'], account: string, direction: string) =>
    entries
      .filter((e) => e.account === account && e.direction === direction)
      .reduce((sum, e) => sum + e.amount, 0);

  it('every transaction balances, posts what it paid, and each loan’s principal account is what its rows still owe', async () => {
    const rows = (await stack.database.db.select().from(loans)).filter(
      (row) => row.partnerId === partnerId,
    );
    const moved = rows.filter((row) => row.disbursedAt !== null);
    expect(moved.length).toBeGreaterThanOrEqual(3); // the sections above disbursed loans
    for (const row of moved) {
      const loan = (await (await api(`/v3/loans/${row.id}`)).json()) as LoanBody;
      const listed = await api(`/v3/loans/${row.id}/transactions?limit=100`);
      if (listed.status !== 200) throw new Error(`${listed.status} ${await listed.text()}`);
      const { data } = (await listed.json()) as { data: Transaction[] };
      let principalAccount = 0;
      const byAccount = new Map<string, { debits: number; credits: number }>();
      for (const t of data) {
        for (const e of t.entries) {
          const account = byAccount.get(e.account) ?? { debits: 0, credits: 0 };
          account[e.direction === 'debit' ? 'debits' : 'credits'] += e.amount;
          byAccount.set(e.account, account);
        }
        const debits = t.entries.filter((e) => e.direction === 'debit');
        const credits = t.entries.filter((e) => e.direction === 'credit');
        expect(debits.reduce((s, e) => s + e.amount, 0)).toBe(
          credits.reduce((s, e) => s + e.amount, 0),
        );
        if (t.type === 'disbursement')
          expect(t.entries).toEqual([
            { account: 'loan_principal', direction: 'debit', amount: loan.principal_amount },
            {
              account: 'disbursement_clearing',
              direction: 'credit',
              amount: loan.requested_amount,
            },
            { account: 'iof_payable', direction: 'credit', amount: loan.iof_amount },
          ]);
        else {
          expect(sumOf(t.entries, 'collections_clearing', 'debit')).toBe(t.amount);
          expect(sumOf(t.entries, 'loan_principal', 'credit')).toBe(t.principal_amount);
          expect(sumOf(t.entries, 'interest_income', 'credit')).toBe(t.interest_amount);
          expect(sumOf(t.entries, 'late_fee_income', 'credit')).toBe(t.late_fee_amount);
          expect(sumOf(t.entries, 'late_interest_income', 'credit')).toBe(t.late_interest_amount);
        }
        principalAccount +=
          sumOf(t.entries, 'loan_principal', 'debit') -
          sumOf(t.entries, 'loan_principal', 'credit');
      }
      expect(principalAccount).toBe(repaymentOf(row).principal_outstanding);
      if (loan.status === 'finished') expect(principalAccount).toBe(0);
      // Ops read the same accounts, summed by the database.
      const accounts = [...byAccount]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([account, { debits, credits }]) => ({
          account,
          debits,
          credits,
          balance: debits - credits,
        }));
      const debits = accounts.reduce((sum, a) => sum + a.debits, 0);
      expect(await opsGet(`/loans/${row.id}/ledger`)).toEqual({
        loan_id: row.id,
        accounts,
        debits,
        credits: debits,
      });
    }
    const waiting = rows.find((r) => !r.disbursedAt)!;
    expect(await opsGet(`/loans/${waiting.id}/ledger`)).toEqual({
      loan_id: waiting.id,
      accounts: [],
      debits: 0,
      credits: 0,
    });
    const unknown = await fetch(`${stack.baseUrl}/ops/v1/loans/ln_${'0'.repeat(32)}/ledger`, {
      headers: { authorization: `Bearer ${OPS_TOKEN}` },
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Problem).code).toBe('loan_not_found');
  });

  it('the trial balance closes, production and sandbox apart, and counts a day’s entries only', async () => {
    type Balance = {
      accounts: { account: string; debits: number; credits: number; balance: number }[];
      debits: number;
      credits: number;
    };
    const today = await opsGet<{ date: string; production: Balance; sandbox: Balance }>(
      '/ledger/trial-balance',
    );
    expect(today.date).toBe(businessDate(new Date()));
    // Other files book production loans on the run's one database: production closes on its own.
    expect(today.production.debits).toBe(today.production.credits);
    expect(today.production.accounts.reduce((sum, a) => sum + a.balance, 0)).toBe(0);
    expect(today.sandbox.debits).toBeGreaterThan(0);
    expect(today.sandbox.debits).toBe(today.sandbox.credits);
    expect(today.sandbox.accounts.reduce((sum, a) => sum + a.balance, 0)).toBe(0);
    const principalOf = (balance: Balance) =>
      balance.accounts.find((a) => a.account === 'loan_principal')?.balance ?? 0;
    // Every sandbox loan's principal still owed (the sandbox clock moved some ahead: take all; a
    // withdrawn loan owes none, a written-off loan's is in credit_losses) is the ledger's, read in
    // one snapshot: other files disburse and pay loans meanwhile, some out and back within a second.
    const { owed, ahead } = await stack.database.db.transaction(
      async (tx) => ({
        owed: (await tx.select().from(loans))
          .filter(
            (row) =>
              row.disbursedAt !== null &&
              row.environment === 'sandbox' &&
              row.writtenOffAt === null,
          )
          .reduce(
            (sum, row) =>
              sum +
              (row.cancellationReason === 'withdrawal'
                ? 0
                : repaymentOf(row).principal_outstanding),
            0,
          ),
        // Every entry: sandbox clocks move loans years on (400 days a call, as often as asked).
        ahead: await trialBalance(tx, 'sandbox', '2999-12-31'),
      }),
      { isolationLevel: 'repeatable read', accessMode: 'read only' },
    );
    expect(principalOf({ accounts: ahead, debits: 0, credits: 0 })).toBe(owed);
    const before = await opsGet<{ sandbox: Balance }>('/ledger/trial-balance?date=2020-01-01');
    expect(before.sandbox).toEqual({ accounts: [], debits: 0, credits: 0 });
    // The imbalance ops alert on.
    const metrics = await (
      await fetch(`${stack.baseUrl}/metrics`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } })
    ).text();
    expect(metrics).toContain('ledger_imbalance_centavos{environment="sandbox"} 0');
    expect(metrics).toContain('ledger_imbalance_centavos{environment="production"} 0');
  });

  it('the reconciliation holds, and names a loan whose principal account differs from its rows', async () => {
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    const check = () =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        execFile(
          'npm',
          ['run', '--silent', 'ledger:check'],
          { env: { ...process.env, DATABASE_URL: stack.database.url } },
          (error, stdout) => resolve({ code: error ? Number(error.code) : 0, output: stdout }),
        );
      });
    expect(await check()).toMatchObject({ code: 0, output: 'ledger: every check holds\n' });
    // A loan whose rows say one thing and the ledger another is named, and the check fails — in
    // a transaction rolled back, so the other files' checks, running meanwhile, never see it.
    const rolledBack = new Error('rolled back');
    const corrupted = stack.database.db.transaction(async (tx) => {
      const [row] = await tx
        .select()
        .from(loans)
        .where(sql`${loans.repayment} is not null`)
        .limit(1);
      const repayment = row!.repayment!;
      await tx
        .update(loans)
        .set({
          repayment: { ...repayment, principal_outstanding: repayment.principal_outstanding + 1 },
        })
        .where(eq(loans.id, row!.id));
      expect(await reconcileLedger(tx)).toEqual([
        {
          check: 'principal_matches_rows',
          subject: row!.id,
          message: `loan_principal is ${repayment.principal_outstanding} centavos; its rows owe ${repayment.principal_outstanding + 1}`,
        },
      ]);
      const report = await ledgerCheckReport(tx);
      expect(report.ok).toBe(false); // npm run ledger:check exits 1
      expect(report.lines.join('\n')).toContain(row!.id);
      throw rolledBack;
    });
    await expect(corrupted).rejects.toBe(rolledBack);
  });

  it('the database refuses to change or remove an entry, and a transaction that does not balance', async () => {
    const db = stack.database.db;
    /** What PostgreSQL said when it refused (drizzle wraps it as the cause). */
    const refusal = async (query: Promise<unknown>) => {
      try {
        await query;
        return 'accepted';
      } catch (error) {
        return String((error as { cause?: unknown }).cause ?? error);
      }
    };
    // A loan transaction's entry (other files post receipts, money no loan owns, too).
    const [entry] = await db
      .select()
      .from(ledgerEntries)
      .where(isNotNull(ledgerEntries.transactionId))
      .limit(1);
    const update = sql`update ledger_entries set amount = 1 where id = ${entry!.id}`;
    const remove = sql`delete from ledger_entries where id = ${entry!.id}`;
    const truncate = sql`truncate ledger_entries cascade`;
    // The service's role holds no privilege to change an entry; the trigger refuses the owner too.
    for (const statement of [update, remove, truncate])
      expect(await refusal(db.execute(statement))).toMatch(
        /permission denied for table ledger_entries/,
      );
    const owner = createDatabase(inject('ownerDatabaseUrl'), { max: 1 });
    try {
      expect(await refusal(owner.db.execute(update))).toMatch(/append-only: UPDATE refused/);
      expect(await refusal(owner.db.execute(remove))).toMatch(/append-only: DELETE refused/);
      expect(await refusal(owner.db.execute(truncate))).toMatch(/append-only: TRUNCATE refused/);
    } finally {
      await owner.close();
    }
    expect(
      await refusal(
        db.transaction(async (tx) => {
          await tx.insert(ledgerEntries).values({ ...entry!, id: undefined, amount: 1 });
        }),
      ),
    ).toMatch(/does not balance/);
    const [{ count }] = (await db.execute(
      sql`select count(*)::int as count from ledger_entries where transaction_id = ${entry!.transactionId}`,
    )) as unknown as [{ count: number }];
    expect(count).toBeGreaterThan(1);
  });
});
