import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { addDays, startOfBusinessDate } from '../../src/domain/business-date.js';
import { reconcileLedger } from '../../src/db/queries/ledger.js';
import type { loanTransactionSchema } from '../../src/http/routes/loans/schema.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import { recordOpenedHistory } from '../helpers/opened-history.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { advanceSandboxClock } from '../helpers/sandbox-clock.js';
import { offerOf } from '../helpers/credit.js';
import { opsRequest } from '../helpers/operators.js';
import { expectedRefinancingPrincipal } from '../helpers/refinancing-iof.js';

type Transaction = z.infer<typeof loanTransactionSchema>;

/** The write-off period of this file's stack: short, so a clock advance of days reaches it. */
const WRITE_OFF_AFTER_DAYS = 5;

let stack: TestStack;
let api: Client;
/** Another customer's loan (the write-off test's, written off): a refinancing may not name it. */
let otherCustomersLoan: string | undefined;
let writtenOffCustomer: string | undefined;

/*
 * Contract §17 over HTTP on one stack, time moved by the customer's sandbox clock only (the
 * review and the sandbox disbursement take longer than any test: ops confirm disbursements).
 */
beforeAll(async () => {
  stack = await startStack({
    env: {
      SANDBOX_REVIEW_DELAY: '1h',
      SANDBOX_DISBURSEMENT_DELAY: '60d',
      WRITE_OFF_AFTER_DAYS: String(WRITE_OFF_AFTER_DAYS),
    },
  });
  const partner = await createPartner(stack);
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
});

/** The customer's sandbox clock to `to`, everything it moves caught up. */
const advance = (customerId: string, to: number) => advanceSandboxClock(api, customerId, to);

const loanOf = (id: string) => json<LoanBody>(api(`/v3/loans/${id}`));
const transactionsOf = async (id: string) =>
  (await json<{ data: Transaction[] }>(api(`/v3/loans/${id}/transactions?limit=100`))).data;

describe('write-off (contract §17)', () => {
  it('a row overdue more than WRITE_OFF_AFTER_DAYS writes the loan off; money received later is a recovery', async () => {
    const loan = await activeLoan(stack, api, { opsToken: OPS_TOKEN });
    otherCustomersLoan = loan.id;
    writtenOffCustomer = loan.customer_id;
    expect(loan.written_off_at).toBeNull();
    const due = loan.schedule[0]!.due_date;

    // The last day before the period ends: row 1 is overdue, the loan still on the book.
    await advance(loan.customer_id, startOfBusinessDate(addDays(due, WRITE_OFF_AFTER_DAYS)));
    const overdue = await loanOf(loan.id);
    expect(overdue.schedule[0]!.status).toBe('overdue');
    expect(overdue.written_off_at).toBeNull();

    // One day more: overdue more than the period.
    const deadline = startOfBusinessDate(addDays(due, WRITE_OFF_AFTER_DAYS + 1));
    await advance(loan.customer_id, deadline + 3_600_000);
    const written = await eventually(async () => {
      const now = await loanOf(loan.id);
      return now.written_off_at ? now : undefined;
    }, 'the loan written off');
    expect(written.written_off_at).toBe(new Date(deadline).toISOString());
    // An accounting step: the loan repays as before, and the borrower owes what they owed.
    expect(written.status).toBe('active');
    expect(written.schedule.map((row) => row.status)).toEqual(['overdue', 'pending', 'pending']);
    expect(written.outstanding_amount).toBeGreaterThanOrEqual(overdue.outstanding_amount);

    const writeOff = (await transactionsOf(loan.id)).filter((t) => t.type === 'write_off');
    expect(writeOff).toHaveLength(1);
    expect(writeOff[0]!.amount).toBe(loan.principal_amount);
    expect(writeOff[0]!.entries).toEqual([
      { account: 'credit_losses', direction: 'debit', amount: loan.principal_amount },
      { account: 'loan_principal', direction: 'credit', amount: loan.principal_amount },
    ]);
    const events = (
      await json<{ data: { type: string; data: { id: string; written_off_at: string | null } }[] }>(
        api('/v3/events?type=loan.written_off&limit=100'),
      )
    ).data.filter((event) => event.data.id === loan.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.written_off_at).toBe(written.written_off_at);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);

    // A payment afterwards pays the borrower's rows as ever; the book takes it as a recovery.
    const paid = await json<LoanBody>(
      api(`/v3/sandbox/loans/${loan.id}/payments`, { method: 'POST', body: {} }),
    );
    expect(paid.schedule[0]!.status).toBe('paid');
    const payment = (await transactionsOf(loan.id)).find((t) => t.type === 'payment')!;
    // The overdue row with its late charges, as §13 allocates.
    expect(payment.amount).toBeGreaterThan(loan.schedule[0]!.installment_amount);
    expect(payment.entries).toEqual([
      { account: 'collections_clearing', direction: 'debit', amount: payment.amount },
      { account: 'recoveries', direction: 'credit', amount: payment.amount },
    ]);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    // Written off once: the timer does not come back for the next overdue row.
    expect((await loanOf(loan.id)).written_off_at).toBe(written.written_off_at);
    await recordOpenedHistory(
      stack,
      stack.temporal.workflow.getHandle(`loan/${loan.id}`),
      'loan',
      'written-off-then-recovered',
    );
  });
});

type Problem = { code: string; detail: string; errors?: { path: string; code: string }[] };
type Simulation = LoanBody & { id: string; valid_until: string };

const simulate = (offerId: string, body: Record<string, unknown>) =>
  api(`/v3/credit-offers/${offerId}/simulations`, { method: 'POST', body });
const createLoan = (body: Record<string, unknown>) => api('/v3/loans', { method: 'POST', body });
const sign = (loan: LoanBody) =>
  json<LoanBody>(
    api(`/v3/sandbox/loans/${loan.id}/signatures`, {
      method: 'POST',
      body: { cpf: loan.signers[0]!.cpf },
    }),
  );
const confirmDisbursement = (loanId: string) =>
  json<LoanBody>(
    opsRequest(stack, OPS_TOKEN, `/loans/${loanId}/disbursement`, { outcome: 'confirmed' }),
  );
const loansOf = async (customerId: string) =>
  (await json<{ data: LoanBody[] }>(api(`/v3/loans?customer_id=${customerId}&limit=100`))).data;
const finishedEventsOf = async (loanId: string) =>
  (
    await json<{ data: { data: { id: string } }[] }>(api('/v3/events?type=loan.finished&limit=100'))
  ).data.filter((event) => event.data.id === loanId);

describe('refinancing (contract §17)', () => {
  it('pays an active loan off at the new loan’s release, priced by the IOF rule; refusals change nothing', async () => {
    const old = await activeLoan(stack, api, { opsToken: OPS_TOKEN });
    // While a loan repays, the customer's offer is that loan's: a refinancing is made on it.
    const offer = await offerOf(api, old.customer_id, 'accepted');
    const quote = await json<{ payoff_amount: number; date: string }>(
      api(`/v3/loans/${old.id}/payoff`),
    );
    expect(quote.date).toBe(old.release_date);

    // Not covered: the requested amount below the payoff (422, nothing stored).
    const short = await simulate(offer.id, { amount: offer.min_amount, installments: 3 });
    expect(short.status).toBe(422);
    expect(((await short.json()) as Problem).code).toBe('refinancing_not_covered');

    const amount = offer.min_amount * 2;
    const simulation = await json<Simulation>(simulate(offer.id, { amount, installments: 3 }), 201);
    // An independent computation of §17's IOF for this payoff (test/helpers/refinancing-iof.ts).
    const expected = expectedRefinancingPrincipal({
      requestedAmount: amount,
      monthlyRate: String(simulation.monthly_interest_rate),
      releaseDate: simulation.release_date,
      dueDates: simulation.schedule.map((row) => row.due_date),
      refinanced: {
        amount: quote.payoff_amount,
        releasedOn: old.release_date,
        unpaidRows: old.schedule.map((row) => ({
          principal: row.principal_amount,
          dueDate: row.due_date,
        })),
      },
    });
    expect(simulation.principal_amount).toBe(expected.principal);
    expect(simulation.iof_amount).toBe(expected.principal - amount);
    // Less than the same amount all new money pays.
    expect(simulation.iof_amount).toBeLessThan(expected.allNewMoney - amount);

    const body = {
      credit_offer_id: offer.id,
      simulation_id: simulation.id,
      disbursement_account: { type: 'pix', pix_key: 'refinancing@example.com' },
    };
    const before = await loansOf(old.customer_id);
    const oldBefore = await loanOf(old.id);
    const refusals: [unknown[], number, string][] = [
      [[old.id, old.id], 422, 'validation_error'],
      [[old.id, otherCustomersLoan], 404, 'loan_not_found'],
      // Without the loan whose offer it is.
      [[otherCustomersLoan], 409, 'credit_offer_unavailable'],
    ];
    expect(otherCustomersLoan).toBeDefined();
    for (const [refinances, status, code] of refusals) {
      const refused = await createLoan({ ...body, refinances });
      expect(refused.status, code).toBe(status);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      const problem = (await refused.json()) as Problem;
      expect(problem.code).toBe(code);
      if (code === 'validation_error')
        expect(problem.errors).toEqual([
          expect.objectContaining({ path: 'body.refinances.1', code: 'duplicate_refinanced_loan' }),
        ]);
    }
    expect(await loansOf(old.customer_id)).toEqual(before);
    expect(await loanOf(old.id)).toEqual(oldBefore);

    const created = await json<LoanBody>(createLoan({ ...body, refinances: [old.id] }), 201);
    expect(created.principal_amount).toBe(simulation.principal_amount);
    expect(created.iof_amount).toBe(simulation.iof_amount);
    // A second live refinancing of the same loan is refused, simulated or made.
    const busy = await simulate(offer.id, { amount, installments: 3 });
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as Problem).code).toBe('loan_already_being_refinanced');
    const second = await createLoan({ ...body, refinances: [old.id] });
    expect(second.status).toBe(409);
    expect(((await second.json()) as Problem).code).toBe('loan_already_being_refinanced');

    // Until the release nothing changes on the old loan.
    await sign(created);
    expect((await loanOf(old.id)).status).toBe('active');
    const active = await confirmDisbursement(created.id);
    expect(active.status).toBe('active');
    const finished = await eventually(async () => {
      const now = await loanOf(old.id);
      return now.status === 'finished' ? now : undefined;
    }, 'the old loan finished');
    expect(finished.finished_reason).toBe('refinanced');
    expect(finished.outstanding_amount).toBe(0);
    expect(await finishedEventsOf(old.id)).toHaveLength(1);

    // The borrower receives only the new money; the payoff stays in the book.
    const newMoney = amount - quote.payoff_amount;
    const [disbursement] = await transactionsOf(created.id);
    expect(disbursement!.type).toBe('disbursement');
    expect(disbursement!.entries).toEqual([
      { account: 'loan_principal', direction: 'debit', amount: created.principal_amount },
      { account: 'disbursement_clearing', direction: 'credit', amount: newMoney },
      { account: 'refinancing_clearing', direction: 'credit', amount: quote.payoff_amount },
      { account: 'iof_payable', direction: 'credit', amount: created.iof_amount },
    ]);
    const payoff = (await transactionsOf(old.id)).find((t) => t.type === 'refinancing')!;
    expect(payoff.amount).toBe(quote.payoff_amount);
    expect(payoff.entries[0]).toEqual({
      account: 'refinancing_clearing',
      direction: 'debit',
      amount: quote.payoff_amount,
    });
    expect(payoff.entries.find((e) => e.account === 'loan_principal')?.amount).toBe(
      old.principal_amount,
    );
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    await recordOpenedHistory(
      stack,
      stack.temporal.workflow.getHandle(`loan/${old.id}`),
      'loan',
      'refinanced-by-a-new-loan',
    );
    await recordOpenedHistory(
      stack,
      stack.temporal.workflow.getHandle(`loan/${created.id}`),
      'loan',
      'refinancing-released',
    );

    // The old loan is no longer active: refinancing it again is refused.
    // (The new loan's payoff now: the IOF financed on top of what it released.)
    const next = await json<Simulation>(
      simulate(offer.id, { amount: amount * 2, installments: 3 }),
      201,
    );
    const stale = await createLoan({
      ...body,
      simulation_id: next.id,
      refinances: [created.id, old.id],
    });
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as Problem).code).toBe('refinanced_loan_not_active');

    // A release refused: the loan it refinances was paid off meanwhile. The new loan is
    // cancelled, the paid-off loan as its payoff left it.
    const refinancing = await json<LoanBody>(
      createLoan({ ...body, simulation_id: next.id, refinances: [created.id] }),
      201,
    );
    await sign(refinancing);
    await json<LoanBody>(
      api(`/v3/sandbox/loans/${created.id}/payoff`, { method: 'POST', body: {} }),
    );
    const paidOff = await loanOf(created.id);
    expect(paidOff.status).toBe('finished');
    const refused = await confirmDisbursement(refinancing.id);
    expect(refused.status).toBe('cancelled');
    expect(refused.cancellation_reason).toBe('refinanced_loan_changed');
    expect(await transactionsOf(refinancing.id)).toEqual([]);
    const untouched = await loanOf(created.id);
    expect(untouched.finished_reason).toBeNull();
    expect((await transactionsOf(created.id)).map((t) => t.type)).toEqual([
      'disbursement',
      'payoff',
    ]);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
    await recordOpenedHistory(
      stack,
      stack.temporal.workflow.getHandle(`loan/${refinancing.id}`),
      'loan',
      'refinancing-refused-at-release',
    );
  });

  it('refuses a written-off loan, and one with a live payment agreement — at the release too', async () => {
    // The write-off test's loan: its offer still its own, the loan written off.
    expect(writtenOffCustomer).toBeDefined();
    const writtenOffOffer = await offerOf(api, writtenOffCustomer!, 'accepted');
    const writtenOff = await simulate(writtenOffOffer.id, {
      amount: writtenOffOffer.approved_amount,
      installments: 3,
    });
    expect(writtenOff.status).toBe(409);
    expect(((await writtenOff.json()) as Problem).code).toBe('refinanced_loan_written_off');

    const old = await activeLoan(stack, api, { opsToken: OPS_TOKEN });
    const offer = await offerOf(api, old.customer_id, 'accepted');
    const simulation = await json<Simulation>(
      simulate(offer.id, { amount: offer.min_amount * 2, installments: 3 }),
      201,
    );
    const refinancing = await json<LoanBody>(
      createLoan({
        credit_offer_id: offer.id,
        simulation_id: simulation.id,
        disbursement_account: { type: 'pix', pix_key: 'refinancing@example.com' },
        refinances: [old.id],
      }),
      201,
    );
    await sign(refinancing);
    // An agreement on the old loan (over all its rows: none is late) waits for the refinancing…
    const terms = await json<{ id: string }>(
      api(`/v3/loans/${old.id}/agreements/simulations`, {
        method: 'POST',
        body: { rows: 'all', installments: 2, first_due_date: addDays(old.release_date, 10) },
      }),
      201,
    );
    const waits = await api(`/v3/loans/${old.id}/agreements`, {
      method: 'POST',
      body: { simulation_id: terms.id },
    });
    expect(waits.status).toBe(409);
    expect(((await waits.json()) as Problem).code).toBe('loan_already_being_refinanced');
    // …and one made anyway in the moment before the refinancing's row was written (a race the
    // request cannot see) is refused by the release: written here as that race would leave it.
    await stack.database.sql`
      update loan_refinancings set status = 'void' where loan_id = ${refinancing.id}`;
    await json(
      api(`/v3/loans/${old.id}/agreements`, { method: 'POST', body: { simulation_id: terms.id } }),
      201,
    );
    await stack.database.sql`
      update loan_refinancings set status = 'pending' where loan_id = ${refinancing.id}`;
    const refused = await confirmDisbursement(refinancing.id);
    expect(refused.status).toBe('cancelled');
    expect(refused.cancellation_reason).toBe('refinanced_loan_changed');
    const unchanged = await loanOf(old.id);
    expect(unchanged.status).toBe('active');
    expect(unchanged.finished_reason).toBeNull();
    // Its refinancing ended, the loan is free again, but not while the agreement is live.
    const blocked = await simulate(offer.id, { amount: offer.min_amount * 2, installments: 3 });
    expect(blocked.status).toBe(409);
    expect(((await blocked.json()) as Problem).code).toBe('refinanced_loan_in_agreement');
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
  });
});
