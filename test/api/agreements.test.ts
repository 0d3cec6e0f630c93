import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { agreementsOfLoan } from '../../src/db/queries/agreements.js';
import { reconcileLedger } from '../../src/db/queries/ledger.js';
import { addDays, businessDate } from '../../src/domain/business-date.js';
import type {
  agreementSchema,
  agreementSimulationSchema,
} from '../../src/http/routes/agreements/schema.js';
import { activeLoan as activeLoanOf, type LoanBody } from '../helpers/credit.js';
import { recordOpenedHistory } from '../helpers/opened-history.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { advanceSandboxClock } from '../helpers/sandbox-clock.js';

type SimulationBody = z.infer<typeof agreementSimulationSchema>;
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
});
