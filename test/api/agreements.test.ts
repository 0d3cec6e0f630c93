import { createHash } from 'node:crypto';
import { Decimal as DecimalJs } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { agreementsOfLoan } from '../../src/db/queries/agreements.js';
import { reconcileLedger } from '../../src/db/queries/ledger.js';
import { addDays, businessDate } from '../../src/domain/business-date.js';
import type {
  agreementSchema,
  agreementSimulationSchema,
} from '../../src/http/routes/agreements/schema.js';
import type { loanTransactionSchema, payoffSchema } from '../../src/http/routes/loans/schema.js';
import { activeLoan as activeLoanOf, type LoanBody } from '../helpers/credit.js';
import { HostedBrowser } from '../helpers/hosted.js';
import { codeIn, waitForMessage } from '../helpers/mailbox.js';
import { recordOpenedHistory } from '../helpers/opened-history.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { advanceSandboxClock } from '../helpers/sandbox-clock.js';

/** The test's own decimals: 40 digits, independent of the service's setup. */
const Decimal = DecimalJs.clone({ precision: 40 });
type Decimal = InstanceType<typeof Decimal>;
type SimulationBody = z.infer<typeof agreementSimulationSchema>;
type Transaction = z.infer<typeof loanTransactionSchema>;
type Payoff = z.infer<typeof payoffSchema>;
type AgreementBody = z.infer<typeof agreementSchema>;
interface Problem {
  code: string;
  errors?: { path: string; code: string }[];
}

let stack: TestStack;
let api: Client;
let otherPartner: Client;

beforeAll(async () => {
  stack = await startStack({
    env: { SANDBOX_REVIEW_DELAY: '1h', SANDBOX_DISBURSEMENT_DELAY: '60d' },
  });
  const partner = await createPartner(stack);
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
  otherPartner = client(
    stack,
    await tokenFor(stack, (await createPartner(stack, 'Other')).credentials.sandbox),
  );
});
afterAll(async () => {
  await stack?.stop();
});

/** The customer's sandbox clock to `to`, everything it moves caught up. */
const advanceClock = (customerId: string, to: Date) => advanceSandboxClock(api, customerId, to);

const simulate = (loanId: string, body: Record<string, unknown>, as: Client = api) =>
  as(`/v3/loans/${loanId}/agreements/simulations`, { method: 'POST', body });
const create = (loanId: string, simulationId: string) =>
  api(`/v3/loans/${loanId}/agreements`, { method: 'POST', body: { simulation_id: simulationId } });
const problemOf = async (response: Promise<Response>, status: number) => {
  const res = await response;
  expect(res.status).toBe(status);
  return (await res.json()) as Problem;
};
const sum = <T>(items: readonly T[], pick: (item: T) => number) =>
  items.reduce((total, item) => total + pick(item), 0);

describe('payment agreements (contract §17)', () => {
  it('simulates on a late loan, makes one live agreement, and refuses what it must', async () => {
    const loan = await activeLoanOf(stack, api, { opsToken: OPS_TOKEN });
    const customerId = loan.customer_id;
    // Nothing is late yet: an agreement on the overdue rows has nothing to cover.
    const tomorrow = addDays(businessDate(new Date()), 1);
    const early = await problemOf(
      simulate(loan.id, { rows: 'overdue', installments: 3, first_due_date: tomorrow }),
      422,
    );
    expect(early.errors).toEqual([
      expect.objectContaining({ path: 'body.rows', code: 'nothing_overdue' }),
    ]);

    // Ten days after the second row's due date, two rows are overdue.
    const today = addDays(loan.schedule[1]!.due_date, 10);
    await advanceClock(customerId, new Date(`${today}T15:00:00Z`));
    const late = await json<LoanBody>(api(`/v3/loans/${loan.id}`));
    const overdue = late.schedule.filter((row) => row.status === 'overdue');
    expect(overdue.map((row) => row.number)).toEqual([1, 2]);

    const first = addDays(today, 10);
    const simulation = await json<SimulationBody>(
      simulate(loan.id, {
        rows: 'overdue',
        discount_percentage: 50,
        installments: 4,
        first_due_date: first,
      }),
      201,
    );
    expect(simulation).toMatchObject({ loan_id: loan.id, date: today, rows: 'overdue' });
    // The debt is what the overdue rows ask for today, late charges included.
    expect(simulation.debt_amount).toBe(sum(overdue, (row) => row.amount_due));
    expect(simulation.covered_rows.map((row) => row.number)).toEqual([1, 2]);
    const charges =
      simulation.interest_amount + simulation.late_fee_amount + simulation.late_interest_amount;
    expect(simulation.late_fee_amount + simulation.late_interest_amount).toBeGreaterThan(0);
    expect(Math.abs(simulation.discount_amount * 2 - charges)).toBeLessThanOrEqual(1);
    expect(simulation.agreed_amount).toBe(simulation.debt_amount - simulation.discount_amount);
    expect(simulation.schedule).toHaveLength(4);
    expect(simulation.schedule[0]!.due_date).toBe(first);
    expect(sum(simulation.schedule, (row) => row.principal_amount)).toBe(simulation.agreed_amount);
    expect(simulation.total_amount).toBe(sum(simulation.schedule, (row) => row.installment_amount));

    // Refusals name their fields and change nothing.
    const bad = await problemOf(
      simulate(loan.id, {
        rows: 'overdue',
        discount_percentage: 10,
        discount_amount: 100,
        installments: 25,
        first_due_date: first,
        extra: true,
      }),
      422,
    );
    expect(bad.errors?.map((e) => `${e.path} ${e.code}`).sort()).toEqual([
      'body.discount_amount invalid_value',
      'body.extra unknown_field',
      'body.installments out_of_range',
    ]);
    const aboveCharges = await problemOf(
      simulate(loan.id, {
        rows: 'overdue',
        discount_amount: charges + 1,
        installments: 2,
        first_due_date: first,
      }),
      422,
    );
    expect(aboveCharges.errors).toEqual([
      expect.objectContaining({ path: 'body.discount_amount', code: 'discount_above_charges' }),
    ]);
    const tooFar = await problemOf(
      simulate(loan.id, { rows: 'all', installments: 2, first_due_date: addDays(today, 31) }),
      422,
    );
    expect(tooFar.errors).toEqual([
      expect.objectContaining({ path: 'body.first_due_date', code: 'out_of_range' }),
    ]);
    expect(
      (
        await problemOf(
          simulate(loan.id, { rows: 'all', installments: 2, first_due_date: first }, otherPartner),
          404,
        )
      ).code,
    ).toBe('loan_not_found');

    // With every row: the debt is the payoff amount of the day, all the principal still owed.
    const all = await json<SimulationBody>(
      simulate(loan.id, { rows: 'all', installments: 6, first_due_date: first }),
      201,
    );
    const payoff = await json<{ payoff_amount: number }>(api(`/v3/loans/${loan.id}/payoff`));
    expect(all.debt_amount).toBe(payoff.payoff_amount);
    expect(all.discount_amount).toBe(0);

    const agreement = await json<AgreementBody>(create(loan.id, simulation.id), 201);
    expect(agreement).toMatchObject({
      loan_id: loan.id,
      simulation_id: simulation.id,
      status: 'pending_acceptance',
      agreed_amount: simulation.agreed_amount,
      schedule: simulation.schedule,
      accepted_at: null,
    });
    expect(agreement.id).toMatch(/^agr_[0-9a-f]{32}$/);
    expect(await json<AgreementBody>(api(`/v3/agreements/${agreement.id}`))).toEqual(agreement);
    expect((await otherPartner(`/v3/agreements/${agreement.id}`)).status).toBe(404);
    const listed = await json<{ data: AgreementBody[] }>(api(`/v3/loans/${loan.id}/agreements`));
    expect(listed.data.map((a) => a.id)).toEqual([agreement.id]);
    expect((await agreementsOfLoan(stack.database.db, loan.id)).map((a) => a.id)).toEqual([
      agreement.id,
    ]);

    // One live agreement per loan, whichever simulation is sent.
    expect((await problemOf(create(loan.id, all.id), 409)).code).toBe('agreement_exists');
    expect((await problemOf(create(loan.id, simulation.id), 409)).code).toBe('agreement_exists');
    const events = await json<{ data: { type: string; data: { id: string } }[] }>(
      api(`/v3/events?resource_id=${agreement.id}`),
    );
    expect(events.data.map((e) => e.type)).toEqual(['loan.agreement_created']);

    // The borrower accepts (the sandbox helper): `pending_entry`, once, whatever is sent again.
    const accept = (id: string) =>
      api(`/v3/sandbox/agreements/${id}/acceptance`, { method: 'POST' });
    const accepted = await json<AgreementBody>(accept(agreement.id));
    expect(accepted.status).toBe('pending_entry');
    expect(accepted.accepted_at?.slice(0, 14)).toBe(`${today}T15:`);
    expect(await json<AgreementBody>(accept(agreement.id))).toEqual(accepted);
    expect(
      (await otherPartner(`/v3/sandbox/agreements/${agreement.id}/acceptance`, { method: 'POST' }))
        .status,
    ).toBe(404);

    // Nothing changed on the loan, and the books hold.
    const after = await json<LoanBody>(api(`/v3/loans/${loan.id}`));
    expect(after.schedule).toEqual(late.schedule);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);

    // Its entry not paid by the end of its first row's due date, the loan's workflow lapses it
    // at that deadline (no command read it since): nothing changed on the loan.
    const later = addDays(first, 1);
    await advanceClock(customerId, new Date(`${later}T15:00:00Z`));
    const lapsed = await json<AgreementBody>(api(`/v3/agreements/${agreement.id}`));
    expect(lapsed).toMatchObject({
      status: 'lapsed',
      accepted_at: accepted.accepted_at,
      // The deadline's instant (the end of the first row's due date in São Paulo), not the clock's.
      ended_at: `${later}T02:59:59.999Z`,
    });
    expect((await json<LoanBody>(api(`/v3/loans/${loan.id}`))).status).toBe('active');
    const again = await json<SimulationBody>(
      simulate(loan.id, { rows: 'overdue', installments: 2, first_due_date: addDays(later, 5) }),
      201,
    );
    expect(again.date).toBe(later);
    expect(again.late_interest_amount).toBeGreaterThan(simulation.late_interest_amount);
    const second = await json<AgreementBody>(create(loan.id, again.id), 201);
    expect(second.status).toBe('pending_acceptance');
    expect((await problemOf(accept(agreement.id), 409)).code).toBe('invalid_state');
    const history = await json<{ data: { type: string }[] }>(
      api(`/v3/events?resource_id=${agreement.id}&order=asc`),
    );
    expect(history.data.map((e) => e.type)).toEqual([
      'loan.agreement_created',
      'loan.agreement_accepted',
      'loan.agreement_lapsed',
    ]);
    expect((await problemOf(create(loan.id, simulation.id), 409)).code).toBe('agreement_exists');
    await recordOpenedHistory(
      stack,
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'agreement-accepted-then-lapsed',
    );
  });

  it('an agreement kept (entry, renegotiated rows, fulfilled) and one broken after AGREEMENT_BREAK_DAYS, the books holding', async () => {
    const loan = await activeLoanOf(stack, api, { opsToken: OPS_TOKEN });
    const customerId = loan.customer_id;
    const at = (date: string) => new Date(`${date}T15:00:00Z`);
    const loanNow = () => json<LoanBody>(api(`/v3/loans/${loan.id}`));
    const agreementNow = (id: string) => json<AgreementBody>(api(`/v3/agreements/${id}`));
    const pay = (amount: number) =>
      json<LoanBody>(
        api(`/v3/sandbox/loans/${loan.id}/payments`, { method: 'POST', body: { amount } }),
      );
    const transactions = async () =>
      (await json<{ data: Transaction[] }>(api(`/v3/loans/${loan.id}/transactions?limit=100`)))
        .data;
    const typesOf = async (id: string) =>
      (
        await json<{ data: { type: string }[] }>(api(`/v3/events?resource_id=${id}&order=asc`))
      ).data.map((e) => e.type);
    const agree = async (body: Record<string, unknown>) => {
      const simulation = await json<SimulationBody>(simulate(loan.id, body), 201);
      const made = await json<AgreementBody>(create(loan.id, simulation.id), 201);
      const accepted = await json<AgreementBody>(
        api(`/v3/sandbox/agreements/${made.id}/acceptance`, { method: 'POST' }),
      );
      expect(accepted.status).toBe('pending_entry');
      return accepted;
    };

    // Kept: rows 1 and 2 overdue, agreed in 2 rows with half the charges off.
    const today = addDays(loan.schedule[1]!.due_date, 5);
    await advanceClock(customerId, at(today));
    const kept = await agree({
      rows: 'overdue',
      discount_percentage: 50,
      installments: 2,
      first_due_date: addDays(today, 5),
    });
    expect(kept.covered_rows.map((row) => row.number)).toEqual([1, 2]);
    // The entry, paid on its due date: `active`, the covered rows `renegotiated`, owing nothing
    // of their own; the row it leaves out is as it was.
    await advanceClock(customerId, at(kept.schedule[0]!.due_date));
    const entered = await pay(kept.schedule[0]!.installment_amount);
    const active = await agreementNow(kept.id);
    expect(active.status).toBe('active');
    expect(active.schedule.map((row) => [row.paid_amount, row.paid_at !== null])).toEqual([
      [kept.schedule[0]!.installment_amount, true],
      [0, false],
    ]);
    expect(entered.schedule.slice(0, 3).map((row) => [row.status, row.amount_due])).toEqual([
      ['renegotiated', 0],
      ['renegotiated', 0],
      ['pending', loan.schedule[2]!.installment_amount],
    ]);
    expect(entered.overdue_amount).toBe(0);
    // The books: the covered rows' charges earned, the discount an expense, the principal grown
    // to the agreed balance; the entry paid the agreement's own interest and principal.
    const taken = (await transactions()).find((t) => t.type === 'agreement')!;
    expect(taken).toMatchObject({
      amount: kept.agreed_amount,
      discount_amount: kept.discount_amount,
    });
    expect(taken.entries).toEqual(
      expect.arrayContaining([
        {
          account: 'loan_principal',
          direction: 'debit',
          amount: kept.agreed_amount - kept.principal_amount,
        },
        { account: 'agreement_discounts', direction: 'debit', amount: kept.discount_amount },
        { account: 'interest_income', direction: 'credit', amount: kept.interest_amount },
      ]),
    );
    expect(await reconcileLedger(stack.database.db)).toEqual([]);

    // On the second row's due date the payoff quote is the agreement's row (a payment reaches it
    // first) and the loan's rows it does not cover; the `next` charge asks for that row.
    const second = kept.schedule[1]!;
    await advanceClock(customerId, at(second.due_date));
    const quote = await json<Payoff>(api(`/v3/loans/${loan.id}/payoff`));
    expect(quote.agreement).toEqual({
      id: kept.id,
      payoff_amount: second.installment_amount,
      rows: [
        {
          number: 2,
          due_date: second.due_date,
          amount_due: second.installment_amount,
          present_value: second.installment_amount,
        },
      ],
    });
    expect(quote.rows.map((row) => row.number)).toEqual(
      loan.schedule.slice(2).map((row) => row.number),
    );
    expect(quote.payoff_amount).toBe(
      second.installment_amount + quote.rows.reduce((sum, row) => sum + row.present_value, 0),
    );
    // Paid by a Pix (a charge the sandbox pays): fulfilled, the covered rows paid by it.
    const byPix = await json<{ id: string; amount: number }>(
      api(`/v3/loans/${loan.id}/charges`, { method: 'POST', body: { scope: 'next' } }),
      201,
    );
    expect(byPix.amount).toBe(second.installment_amount);
    await json(api(`/v3/sandbox/charges/${byPix.id}/pay`, { method: 'POST', body: {} }));
    expect((await agreementNow(kept.id)).status).toBe('fulfilled');
    const fulfilled = await loanNow();
    expect(fulfilled.schedule.slice(0, 2).map((row) => row.status)).toEqual(['paid', 'paid']);
    expect(fulfilled.status).toBe('active');
    expect(await typesOf(kept.id)).toEqual([
      'loan.agreement_created',
      'loan.agreement_accepted',
      'loan.agreement_active',
      'loan.agreement_fulfilled',
    ]);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);

    // Broken: row 3, overdue now, agreed in 2 rows; the entry paid, the second never.
    const row3 = fulfilled.schedule[2]!;
    expect(row3.status).toBe('overdue');
    const broken = await agree({
      rows: 'overdue',
      installments: 2,
      first_due_date: addDays(kept.schedule[1]!.due_date, 3),
    });
    expect(broken.covered_rows.map((row) => row.number)).toEqual([3]);
    const entryDate = broken.schedule[0]!.due_date;
    await advanceClock(customerId, at(entryDate));
    const entry = broken.schedule[0]!.installment_amount;
    expect((await pay(entry)).schedule[2]!.status).toBe('renegotiated');
    // Still running the day its second row is 30 days overdue; broken the next.
    const breakDay = addDays(broken.schedule[1]!.due_date, 31);
    await advanceClock(customerId, at(addDays(breakDay, -1)));
    expect((await agreementNow(broken.id)).status).toBe('active');
    await advanceClock(customerId, at(breakDay));
    const ended = await agreementNow(broken.id);
    expect(ended).toMatchObject({
      status: 'broken',
      ended_at: new Date(`${breakDay}T03:00:00Z`).toISOString(),
    });
    expect((await typesOf(broken.id)).at(-1)).toBe('loan.agreement_broken');

    // Row 3 is back as it was, less the entry, allocated as §13 would have: late interest from
    // its due date to the entry's day, the late fee, then the installment; late interest on
    // what is left from then on (the test's own arithmetic, half-even).
    const halfEven = (value: Decimal) =>
      value.toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber();
    const days = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 86_400_000;
    const installment = row3.installment_amount;
    const lateInterest = halfEven(
      new Decimal(installment).times('0.01').times(days(row3.due_date, entryDate)).div(30),
    );
    const lateFee = halfEven(new Decimal(installment).times('0.02'));
    const left = installment - (entry - lateInterest - lateFee);
    const back = (await loanNow()).schedule[2]!;
    expect(back.status).toBe('overdue');
    expect(back.paid_amount).toBe(entry);
    expect(back.amount_due).toBe(
      left + halfEven(new Decimal(left).times('0.01').times(days(entryDate, breakDay)).div(30)),
    );
    const undone = (await transactions()).filter((t) => t.type === 'agreement_broken');
    expect(undone).toHaveLength(1);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);

    // The loan paid off: finished, and the books still hold.
    const payoff = await json<{ payoff_amount: number }>(api(`/v3/loans/${loan.id}/payoff`));
    expect((await pay(payoff.payoff_amount)).status).toBe('finished');
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    await recordOpenedHistory(
      stack,
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'agreement-kept-by-pix-then-broken',
    );
  });

  it('the borrower accepts on the hosted page with the e-mailed code: the terms, the term PDF of term_sha256, refusals that change nothing', async () => {
    const loan = await activeLoanOf(stack, api, { opsToken: OPS_TOKEN });
    const { email } = await json<{ email: string }>(api(`/v3/customers/${loan.customer_id}`));
    const today = addDays(loan.schedule[0]!.due_date, 5);
    await advanceClock(loan.customer_id, new Date(`${today}T15:00:00Z`));
    const simulation = await json<SimulationBody>(
      simulate(loan.id, {
        rows: 'overdue',
        discount_percentage: 50,
        installments: 2,
        first_due_date: addDays(today, 10),
      }),
      201,
    );
    const agreement = await json<AgreementBody>(create(loan.id, simulation.id), 201);
    const term = agreement.term_sha256!;
    expect(term).toMatch(/^[0-9a-f]{64}$/);
    expect(new URL(agreement.acceptance_url).pathname).toMatch(
      new RegExp(`^/hosted/agreements/${agreement.id}\\.[^/]+$`),
    );
    const agreementNow = () => json<AgreementBody>(api(`/v3/agreements/${agreement.id}`));
    /** `R$ 1.234,56`, the test's own formatting of centavos. */
    const reais = (centavos: number) => {
      const digits = String(centavos).padStart(3, '0');
      return `R$ ${digits.slice(0, -2).replace(/\B(?=(\d{3})+(?!\d))/g, '.')},${digits.slice(-2)}`;
    };

    // The link alone shows no figure and no term; a link with a forged HMAC opens nothing.
    const browser = new HostedBrowser(stack.baseUrl, agreement.acceptance_url);
    const bare = await browser.fetch();
    expect(bare.status).toBe(200);
    const bareHtml = await bare.text();
    expect(bareHtml).toContain('Enviar código');
    expect(bareHtml).not.toContain(reais(agreement.agreed_amount));
    expect((await browser.fetch('/term')).status).toBe(403);
    const forged = agreement.acceptance_url.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect((await new HostedBrowser(stack.baseUrl, forged).fetch()).status).toBe(404);

    // A code to the borrower's e-mail; a wrong one is refused and the accept form without a
    // session records nothing.
    const asked = new Date(Date.now() - 1000);
    const sent = await browser.post('/code', {});
    expect(sent.status).toBe(200);
    const codeId = /name="code_id" value="([^"]+)"/.exec(await sent.text())?.[1] ?? '';
    const code = codeIn(
      await waitForMessage(email, { after: asked, subjectIncludes: 'aceitar o acordo' }),
    );
    // Never the sandbox's published 000000, which is right too.
    const wrong = code === '999999' ? '999998' : String((Number(code) + 1) % 1e6).padStart(6, '0');
    const refused = await browser.post('/verify', { code_id: codeId, code: wrong });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('Código incorreto');
    expect((await browser.post('', { agree: 'yes', term_sha256: term })).status).toBe(403);
    expect(await agreementNow()).toEqual(agreement);

    // The right code opens the terms: the debt, the discount, the agreed balance, the rows, and
    // the term's PDF, whose SHA-256 is term_sha256, the same bytes each time.
    expect((await browser.post('/verify', { code_id: codeId, code })).status).toBe(303);
    const shown = await browser.fetch();
    expect(shown.status).toBe(200);
    const html = await shown.text();
    for (const amount of [
      agreement.debt_amount,
      agreement.discount_amount,
      agreement.agreed_amount,
      ...agreement.covered_rows.map((row) => row.value_amount),
      ...agreement.schedule.map((row) => row.installment_amount),
    ])
      expect(html).toContain(reais(amount));
    expect(html).toContain(term);
    const download = async () => {
      const res = await browser.fetch('/term');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      return Buffer.from(await res.arrayBuffer());
    };
    const pdf = await download();
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(createHash('sha256').update(pdf).digest('hex')).toBe(term);
    expect((await download()).equals(pdf)).toBe(true);

    // Not ticked, or a term other than the agreement's: refused, nothing changes.
    expect((await browser.post('', { term_sha256: term })).status).toBe(422);
    expect((await browser.post('', { agree: 'yes', term_sha256: '0'.repeat(64) })).status).toBe(
      409,
    );
    expect(await agreementNow()).toEqual(agreement);

    // Accepted: `pending_entry` on the customer's clock, the evidence naming the code's channel
    // and the term accepted.
    const accepted = await browser.post('', { agree: 'yes', term_sha256: term });
    expect(accepted.status).toBe(200);
    expect(await accepted.text()).toContain('Acordo aceito');
    const after = await agreementNow();
    expect(after).toMatchObject({ status: 'pending_entry', term_sha256: term });
    expect(after.accepted_at?.slice(0, 14)).toBe(`${today}T15:`);
    const [row] = await agreementsOfLoan(stack.database.db, loan.id);
    expect(row?.acceptedChannel).toMatch(/^email:.+\*/);
    expect(row).toMatchObject({ acceptedSha256: term, acceptedUserAgent: 'test-signer' });

    // A second acceptance is refused and changes nothing; the link sends no more codes.
    const again = await browser.post('', { agree: 'yes', term_sha256: term });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('já foi aceito');
    expect((await browser.post('/code', {})).status).toBe(410);
    expect((await new HostedBrowser(stack.baseUrl, agreement.acceptance_url).fetch()).status).toBe(
      410,
    );
    expect(await agreementNow()).toEqual(after);
    const events = await json<{ data: { type: string; data: AgreementBody }[] }>(
      api(`/v3/events?resource_id=${agreement.id}&order=asc`),
    );
    expect(events.data.map((e) => e.type)).toEqual([
      'loan.agreement_created',
      'loan.agreement_accepted',
    ]);
    expect(events.data[0]!.data).toMatchObject({
      acceptance_url: agreement.acceptance_url,
      term_sha256: term,
    });
  });
});
