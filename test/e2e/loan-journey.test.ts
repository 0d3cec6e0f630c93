import { createHash } from 'node:crypto';
import { PDFDocument } from 'pdf-lib';
import type { Browser } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { simulationSchema } from '../../src/http/routes/credit-offers/schema.js';
import type {
  loanSchema,
  loanTransactionSchema,
  payoffSchema,
} from '../../src/http/routes/loans/schema.js';
import { launchChromium } from '../helpers/browser.js';
import { activeCustomer, offerOf } from '../helpers/credit.js';
import { fakeCpf } from '../helpers/customers.js';
import { recordHistory } from '../helpers/histories.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';
import { maskEmail, maskTaxId } from '../../src/domain/masking.js';
import { codeIn, waitForMessage } from '../helpers/mailbox.js';

type LoanBody = z.infer<typeof loanSchema>;
type PayoffBody = z.infer<typeof payoffSchema>;
type SimulationBody = z.infer<typeof simulationSchema>;
type TransactionBody = z.infer<typeof loanTransactionSchema>;

let stack: TestStack;
let receiver: Receiver;
let api: Client;
let browser: Browser;

beforeAll(async () => {
  receiver = await startReceiver();
  receiver.answer(() => ({ status: 200 }));
  stack = await startStack({
    env: {
      SANDBOX_REVIEW_DELAY: '1h',
      SANDBOX_DISBURSEMENT_DELAY: '2s',
      OFFER_RENEWAL_DELAY: '2s',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    },
    webhookCa: receiver.ca,
  });
  api = client(stack, await tokenFor(stack, (await createPartner(stack)).credentials.sandbox));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await receiver?.close();
});

const loanOf = async (id: string) => (await (await api(`/v3/loans/${id}`)).json()) as LoanBody;

const loanIn = (id: string, status: string) =>
  eventually(async () => {
    const loan = await loanOf(id);
    return loan.status === status ? loan : undefined;
  }, `loan ${id} to be ${status}`);

async function simulation(offerId: string, body: Record<string, unknown>) {
  const response = await api(`/v3/credit-offers/${offerId}/simulations`, { method: 'POST', body });
  expect(response.status).toBe(201);
  return (await response.json()) as SimulationBody;
}

const pixPhone = { type: 'pix', pix_key: '+5511987654321' };

describe('a loan from contract to last installment, over HTTP on the real stack', () => {
  it('customer → offer → simulation → loan → two signatures (page and sandbox) → active → every payment → finished', async () => {
    const endpoint = (await (
      await api('/v3/webhooks/endpoints', {
        method: 'POST',
        body: { url: receiver.url('/loans'), events: ['loan.*'] },
      })
    ).json()) as { id: string; secret: string };
    const customer = await activeCustomer(stack, api);
    const offer = await offerOf(api, customer.id);
    const sim = await simulation(offer.id, {
      amount: offer.min_amount + 100_000,
      installments: offer.min_installments,
    });
    const guarantor = { name: 'Maria Fiadora', cpf: fakeCpf(), email: 'maria@example.com' };

    const created = await api('/v3/loans', {
      method: 'POST',
      body: {
        credit_offer_id: offer.id,
        simulation_id: sim.id,
        disbursement_account: pixPhone,
        signers: [guarantor],
      },
    });
    expect(created.status).toBe(201);
    const loan = (await created.json()) as LoanBody;
    expect(created.headers.get('location')).toBe(`/v3/loans/${loan.id}`);
    // Every field of contract §8, in its order.
    expect(Object.keys(loan)).toEqual([
      'id',
      'customer_id',
      'credit_offer_id',
      'simulation_id',
      'status',
      'currency',
      'requested_amount',
      'iof_amount',
      'principal_amount',
      'installments',
      'installment_amount',
      'monthly_interest_rate',
      'cet_annual',
      'first_due_date',
      'release_date',
      'release_adjustment',
      'disbursement_status',
      'contract_sha256',
      'signing_url',
      'signatures_required',
      'signatures_received',
      'signers',
      'disbursement_account',
      'disbursed_at',
      'outstanding_amount',
      'overdue_amount',
      'days_overdue',
      'paid_installments',
      'next_due_date',
      'schedule',
      'error',
      'cancellation_reason',
      'finished_reason',
      'refund_due_amount',
      'written_off_at',
      'assignment_id',
      'assigned_to',
      'created_at',
      'updated_at',
    ]);
    expect(loan).toMatchObject({
      customer_id: customer.id,
      credit_offer_id: offer.id,
      simulation_id: sim.id,
      status: 'awaiting_signatures',
      requested_amount: sim.requested_amount,
      iof_amount: sim.iof_amount,
      principal_amount: sim.principal_amount,
      installments: sim.installments,
      installment_amount: sim.installment_amount,
      cet_annual: sim.cet_annual,
      first_due_date: sim.first_due_date,
      release_date: sim.release_date,
      release_adjustment: null,
      disbursement_status: 'pending',
      signatures_required: 2,
      signatures_received: 0,
      signers: [
        { name: customer.name, cpf: customer.cpf, signed_at: null },
        { name: guarantor.name, cpf: guarantor.cpf, signed_at: null },
      ],
      disbursement_account: { type: 'pix', pix_key: '+5511987654321', pix_key_type: 'phone' },
      disbursed_at: null,
      outstanding_amount: sim.total_amount,
      paid_installments: 0,
      next_due_date: null,
      error: null,
      cancellation_reason: null,
    });
    expect(loan.schedule).toEqual(
      sim.schedule.map((row) => ({
        ...row,
        status: 'pending',
        amount_due: row.installment_amount,
        paid_amount: 0,
        paid_at: null,
      })),
    );
    expect(loan.signing_url).toMatch(new RegExp(`^${stack.config.publicBaseUrl}/hosted/signing/`));
    // The offer was accepted by the same transaction.
    expect((await offerOf(api, customer.id, 'accepted')).id).toBe(offer.id);

    // The contract: a PDF that opens, whose hash is the loan's.
    const pdfResponse = await api(`/v3/loans/${loan.id}/contract`);
    expect(pdfResponse.headers.get('content-type')).toBe('application/pdf');
    const pdf = Buffer.from(await pdfResponse.arrayBuffer());
    expect(createHash('sha256').update(pdf).digest('hex')).toBe(loan.contract_sha256);
    expect((await PDFDocument.load(pdf)).getTitle()).toBe(`CCB ${loan.id}`);

    // The customer signs on the hosted page, in a browser; nothing is loaded from elsewhere.
    const page = await browser.newPage();
    const foreign: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(stack.baseUrl)) foreign.push(request.url());
    });
    const link = `${stack.baseUrl}${new URL(loan.signing_url).pathname}`;
    await page.goto(link);
    // The link alone shows no cpf, no name, no figure and no contract: a count and a cpf form.
    expect(await page.locator('h1').textContent()).toBe('Assinatura do contrato');
    expect(await page.content()).not.toContain(maskTaxId(customer.cpf));
    expect(await page.content()).toContain('Assinaturas: 0 de 2');
    expect((await page.request.get(`${link}/contract`)).status()).toBe(403);
    // A cpf that does not sign this loan is answered as a signer's is (the page tells nobody who
    // signs, issue 37); no code goes anywhere.
    await page.getByLabel('Seu CPF').fill(fakeCpf());
    await page.getByRole('button', { name: 'Enviar código' }).click();
    await page.waitForSelector('text=Digite o código');
    expect(await page.content()).not.toContain(maskEmail(customer.email));
    await page.getByRole('link', { name: /Pedir um novo código/ }).click();
    // The customer's cpf: a code goes to the customer's e-mail on record.
    const asked = new Date(Date.now() - 1000);
    await page.getByLabel('Seu CPF').fill(customer.cpf);
    await page.getByRole('button', { name: 'Enviar código' }).click();
    await page.waitForSelector('text=Digite o código');
    const mail = await waitForMessage(customer.email, { after: asked });
    await page.getByLabel('Código').fill(codeIn(mail));
    await page.getByRole('button', { name: 'Confirmar' }).click();
    await page.waitForSelector('text=Cédula de Crédito Bancário');
    expect(await page.content()).toContain(loan.contract_sha256);
    const href = await page.getByRole('link', { name: /contrato completo/ }).getAttribute('href');
    const linked = await page.request.get(new URL(href!, page.url()).toString());
    expect(
      createHash('sha256')
        .update(await linked.body())
        .digest('hex'),
    ).toBe(loan.contract_sha256);
    await page.getByLabel(/Li o contrato/).check();
    await page.getByRole('button', { name: /^Assinar como Maria Silva/ }).click();
    await page.waitForSelector('text=Assinatura registrada');
    expect(foreign).toEqual([]);
    await page.close();

    const afterPage = await loanOf(loan.id);
    expect(afterPage).toMatchObject({ status: 'awaiting_signatures', signatures_received: 1 });
    expect(afterPage.signers[0]!.signed_at).not.toBeNull();

    // The guarantor signs through the sandbox helper, twice: the second changes nothing.
    const sign = (cpf: string) =>
      api(`/v3/sandbox/loans/${loan.id}/signatures`, { method: 'POST', body: { cpf } });
    const signed = (await (await sign(guarantor.cpf)).json()) as LoanBody;
    expect(signed).toMatchObject({ status: 'processing', signatures_received: 2 });
    const again = await sign(guarantor.cpf);
    expect(again.status).toBe(200);
    expect(((await again.json()) as LoanBody).signers).toEqual(signed.signers);

    // The sandbox disburses by itself after SANDBOX_DISBURSEMENT_DELAY.
    const active = await loanIn(loan.id, 'active');
    expect(active.disbursed_at).not.toBeNull();
    expect(active.disbursement_status).toBe('confirmed');
    expect(active.next_due_date).toBe(sim.schedule[0]!.due_date);
    expect(
      await api(`/v3/loans/${loan.id}/cancel`, { method: 'POST', body: {} }).then((r) => r.status),
    ).toBe(409);

    // Any amount up to the payoff amount of the day (contract §13); above it, 422 naming it, and
    // nothing recorded.
    const pay = (body: Record<string, unknown>) =>
      api(`/v3/sandbox/loans/${loan.id}/payments`, { method: 'POST', body });
    const transactions = async () =>
      (
        (await (await api(`/v3/loans/${loan.id}/transactions`)).json()) as {
          data: TransactionBody[];
        }
      ).data;
    const quote = (await (await api(`/v3/loans/${loan.id}/payoff`)).json()) as PayoffBody;
    expect(quote.payoff_amount).toBeLessThan(active.outstanding_amount);
    const above = await pay({ amount: quote.payoff_amount + 1 });
    expect(above.status).toBe(422);
    const aboveBody = (await above.json()) as {
      errors: { path: string; code: string; message: string }[];
    };
    expect(aboveBody.errors).toEqual([
      expect.objectContaining({ path: 'body.amount', code: 'above_payoff_amount' }),
    ]);
    expect(aboveBody.errors[0]!.message).toContain(`${quote.payoff_amount} centavos`);
    expect(await transactions()).toHaveLength(1); // the disbursement alone

    // The sandbox's default amount is what the oldest unpaid row is worth on the payment's day:
    // each payment pays exactly that row, before its due date, at its present value.
    // (The rows as released: a disbursement on a later day than priced would have repriced row 1.)
    for (const row of active.schedule) {
      const paid = await pay({});
      expect(paid.status).toBe(200);
      const body = (await paid.json()) as LoanBody;
      expect(body.paid_installments).toBe(row.number);
      expect(body.schedule[row.number - 1]).toMatchObject({ status: 'paid', amount_due: 0 });
      expect(body.schedule[row.number - 1]!.paid_at).not.toBeNull();
      expect(body.schedule.slice(row.number).every((later) => later.paid_amount === 0)).toBe(true);
    }
    const finished = await loanOf(loan.id);
    expect(finished).toMatchObject({
      status: 'finished',
      outstanding_amount: 0,
      paid_installments: sim.installments,
      next_due_date: null,
    });
    expect(finished.schedule.every((row) => row.status === 'paid' && row.paid_at)).toBe(true);

    // The ledger: one disbursement, then one payment per row, oldest first, each named by a
    // reference the sandbox made, each paying its row and nothing else.
    const ledger = await transactions();
    expect(ledger.map((t) => [t.type, t.installment_number])).toEqual([
      ['disbursement', null],
      ...sim.schedule.map(() => ['payment', null]),
    ]);
    expect(ledger[0]!.amount).toBe(sim.requested_amount);
    const payments = ledger.slice(1);
    payments.forEach((payment, index) => {
      const row = active.schedule[index]!;
      expect(payment.reference).toMatch(/^sbx_[0-9a-f]{24}$/);
      expect(payment).toMatchObject({
        late_fee_amount: 0,
        late_interest_amount: 0,
        allocation: [
          {
            installment_number: row.number,
            installment_amount: payment.amount,
            late_fee_amount: 0,
            late_interest_amount: 0,
            discount_amount: payment.discount_amount,
          },
        ],
      });
      // Paid before its due date: the cash plus the interest not charged is the installment.
      expect(payment.amount + payment.discount_amount!).toBe(row.installment_amount);
      expect(payment.discount_amount!).toBeGreaterThanOrEqual(0);
      expect(payment.principal_amount! + payment.interest_amount!).toBe(payment.amount);
      expect(payment.principal_amount!).toBeGreaterThan(0);
      expect(payment.interest_amount!).toBeGreaterThanOrEqual(0);
      expect(finished.schedule[index]).toMatchObject({
        paid_amount: payment.amount,
        paid_at: payment.occurred_at,
      });
    });
    expect(new Set(payments.map((p) => p.reference)).size).toBe(payments.length);
    // Every centavo of principal is paid, and no more.
    expect(payments.reduce((sum, p) => sum + p.principal_amount!, 0)).toBe(
      finished.principal_amount,
    );

    // Every event, in the order written, each with the loan as it stood…
    const expected = [
      'loan.created',
      'loan.signature_received',
      'loan.signature_received',
      'loan.processing',
      'loan.active',
      ...sim.schedule.map(() => 'loan.payment_received'),
      'loan.finished',
    ];
    const log = (await (await api('/v3/events?order=asc&limit=100')).json()) as {
      data: {
        id: string;
        type: string;
        data: LoanBody & { signer?: unknown; payment?: Record<string, unknown> };
      }[];
    };
    const written = log.data.filter((e) => e.type.startsWith('loan.') && e.data.id === loan.id);
    expect(written.map((e) => e.type)).toEqual(expected);
    expect(written[1]!.data.signer).toMatchObject({ name: customer.name, cpf: customer.cpf });
    expect(written[2]!.data.signatures_received).toBe(2);
    // Each loan.payment_received carries its payment as the ledger has it: reference and parts.
    expect(
      written.filter((e) => e.type === 'loan.payment_received').map((e) => e.data.payment),
    ).toEqual(
      payments.map((payment) => ({
        amount: payment.amount,
        paid_at: payment.occurred_at,
        reference: payment.reference,
        apply_to: 'next',
        principal_amount: payment.principal_amount,
        interest_amount: payment.interest_amount,
        late_fee_amount: 0,
        late_interest_amount: 0,
        discount_amount: payment.discount_amount,
        installment_number: null,
      })),
    );
    expect(written.at(-2)!.data.payment!.reference).toMatch(/^sbx_/);
    expect(written.at(-1)!.data).toEqual(finished);
    // …reached the partner's endpoint, signed as Standard Webhooks say.
    const received = await eventually(
      async () => {
        const mine = receiver.requests.filter(
          (r) => r.path === '/loans' && r.body.includes(loan.id),
        );
        return mine.length >= expected.length ? mine : undefined;
      },
      'every loan event delivered',
      30_000,
    );
    const verified = received.map(
      (request) =>
        new Webhook(endpoint.secret).verify(request.body, request.headers) as { id: string },
    );
    expect(verified.map((event) => event.id).sort()).toEqual(written.map((e) => e.id).sort());

    // Ops see the loan's workflow by its id, with its state.
    const handle = stack.temporal.workflow.getHandle(`loan/${loan.id}`);
    const described = await handle.describe();
    expect(
      described.typedSearchAttributes.getAll().map((p) => `${p.key.name}=${String(p.value)}`),
    ).toEqual(
      expect.arrayContaining([
        `LoanId=${loan.id}`,
        `CustomerId=${customer.id}`,
        'Environment=sandbox',
      ]),
    );

    // The repaid offer is spent; a new one follows after OFFER_RENEWAL_DELAY.
    const next = await offerOf(api, customer.id, 'available');
    expect(next.id).not.toBe(offer.id);
    await recordHistory(handle, 'loan', 'two-signers-any-amount-payments-to-finished');
  });

  it('cancelled before disbursement: loan.cancelled, the offer available again; commands refused from the record, no fresh run started', async () => {
    const customer = await activeCustomer(stack, api);
    const offer = await offerOf(api, customer.id);
    const sim = await simulation(offer.id, { amount: offer.min_amount, installments: 3 });
    const loan = (await (
      await api('/v3/loans', {
        method: 'POST',
        body: { credit_offer_id: offer.id, simulation_id: sim.id, disbursement_account: pixPhone },
      })
    ).json()) as LoanBody;
    const cancelled = await api(`/v3/loans/${loan.id}/cancel`, {
      method: 'POST',
      body: { reason: 'customer gave up' },
    });
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json()).toMatchObject({
      status: 'cancelled',
      cancellation_reason: 'customer gave up',
    });
    expect((await offerOf(api, customer.id, 'available')).id).toBe(offer.id);
    // Refused from the record (contract §13, "Ended loans"), so no command can start a fresh run
    // of an ended loan's workflow, however long ago it closed.
    const workflow = stack.temporal.workflow.getHandle(`loan/${loan.id}`);
    await workflow.result();
    const closedRun = (await workflow.describe()).runId;
    const again = await api(`/v3/loans/${loan.id}/cancel`, { method: 'POST', body: {} });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({
      code: 'invalid_state',
      detail: 'The loan is cancelled; it takes no more commands.',
    });
    const sign = await api(`/v3/sandbox/loans/${loan.id}/signatures`, {
      method: 'POST',
      body: { cpf: customer.cpf },
    });
    expect(sign.status).toBe(409);
    expect(await workflow.describe()).toMatchObject({
      runId: closedRun,
      status: { name: 'COMPLETED' },
    });
    // …and the same simulation can be taken again while it is valid.
    const retaken = await api('/v3/loans', {
      method: 'POST',
      body: { credit_offer_id: offer.id, simulation_id: sim.id, disbursement_account: pixPhone },
    });
    expect(retaken.status).toBe(201);
  });

  it('a sandbox disbursement of an amount ending in 13 centavos fails: loan.error, the offer available again', async () => {
    const customer = await activeCustomer(stack, api);
    const offer = await offerOf(api, customer.id);
    const sim = await simulation(offer.id, { amount: offer.min_amount + 13, installments: 3 });
    const loan = (await (
      await api('/v3/loans', {
        method: 'POST',
        body: {
          credit_offer_id: offer.id,
          simulation_id: sim.id,
          disbursement_account: {
            type: 'bank_account',
            bank_code: '341',
            branch: '0001',
            account_number: '12345-6',
            account_type: 'checking',
          },
        },
      })
    ).json()) as LoanBody;
    await api(`/v3/sandbox/loans/${loan.id}/signatures`, {
      method: 'POST',
      body: { cpf: customer.cpf },
    });
    const failed = await loanIn(loan.id, 'error');
    expect(failed.error).toMatchObject({ code: 'disbursement_failed' });
    expect(failed.disbursed_at).toBeNull();
    expect((await offerOf(api, customer.id, 'available')).id).toBe(offer.id);
    const events = (await (await api(`/v3/events?type=loan.error&limit=100`)).json()) as {
      data: { data: LoanBody }[];
    };
    expect(events.data.map((e) => e.data.id)).toContain(loan.id);
    const ledger = (await (await api(`/v3/loans/${loan.id}/transactions`)).json()) as {
      data: unknown[];
    };
    expect(ledger.data).toEqual([]);
  });
});
