import { and, eq, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { entriesOf, reconcileLedger } from '../../src/db/queries/ledger.js';
import { signedSum } from '../../src/domain/ledger/postings.js';
import { events, ledgerEntries, loanTransactions } from '../../src/db/schema/index.js';
import type { simulationSchema } from '../../src/http/routes/credit-offers/schema.js';
import type { loanSchema, payoffSchema } from '../../src/http/routes/loans/schema.js';
import { paymentUpdate } from '../../workflows/loan/messages.js';
import { PAYMENTS_PER_RUN } from '../../workflows/loan/workflow.js';
import { activeCustomer, offerOf } from '../helpers/credit.js';
import { fakeCpf } from '../helpers/customers.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';
import { spawnWorkerProcess } from '../helpers/worker-process.js';

type LoanBody = z.infer<typeof loanSchema>;
type SimulationBody = z.infer<typeof simulationSchema>;
type PayoffBody = z.infer<typeof payoffSchema>;

let stack: TestStack;
let api: Client;
let partnerId: string;

beforeAll(async () => {
  // No worker of the stack's own: this test starts, kills and replaces them.
  stack = await startStack({
    worker: false,
    env: { SANDBOX_REVIEW_DELAY: '1h', SANDBOX_DISBURSEMENT_DELAY: '2s' },
  });
  const partner = await createPartner(stack);
  partnerId = partner.partner_id;
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
});

/** A sandbox cpf whose offer allows more than 12 installments (24, 36 or 48: its 5th digit). */
function cpfForLongLoans(): string {
  for (;;) {
    const cpf = fakeCpf({ notStartingWith9: true });
    if (Number(cpf[4]) % 4 !== 0) return cpf;
  }
}

async function newLoan(installments = 3): Promise<LoanBody> {
  const customer = await activeCustomer(
    stack,
    api,
    installments > 12 ? { cpf: cpfForLongLoans() } : {},
  );
  const offer = await offerOf(api, customer.id);
  expect(offer.max_installments).toBeGreaterThanOrEqual(installments);
  const sim = (await (
    await api(`/v3/credit-offers/${offer.id}/simulations`, {
      method: 'POST',
      body: { amount: offer.min_amount, installments },
    })
  ).json()) as SimulationBody;
  const response = await api('/v3/loans', {
    method: 'POST',
    body: {
      credit_offer_id: offer.id,
      simulation_id: sim.id,
      disbursement_account: { type: 'pix', pix_key: customer.email },
    },
  });
  expect(response.status).toBe(201);
  return (await response.json()) as LoanBody;
}

/** How many ledger entries each of the loan's transactions has. */
async function entryCounts(loanId: string): Promise<Record<string, number>> {
  const rows = await stack.database.db
    .select({ transactionId: ledgerEntries.transactionId, count: sql<number>`count(*)::int` })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.loanId, loanId))
    .groupBy(ledgerEntries.transactionId);
  // A loan's entries all belong to its loan transactions.
  return Object.fromEntries(rows.map((row) => [row.transactionId!, row.count]));
}

const loanOf = async (id: string) => (await (await api(`/v3/loans/${id}`)).json()) as LoanBody;

/** The partner's sandbox payment of the loan. */
const pay = (loanId: string, body: Record<string, unknown>) =>
  api(`/v3/sandbox/loans/${loanId}/payments`, { method: 'POST', body });

/** Signs as the customer and waits for the sandbox disbursement (SANDBOX_DISBURSEMENT_DELAY). */
async function activate(loan: LoanBody): Promise<LoanBody> {
  const signed = await api(`/v3/sandbox/loans/${loan.id}/signatures`, {
    method: 'POST',
    body: { cpf: loan.signers[0]!.cpf },
  });
  expect(signed.status).toBe(200);
  return eventually(async () => {
    const now = await loanOf(loan.id);
    return now.status === 'active' ? now : undefined;
  }, 'the loan active');
}

/**
 * Holds the loan's row lock from another connection, so the next write to the loan waits inside
 * its transaction; answers once a write is seen waiting, with the function that lets it go.
 */
async function holdLoan(
  loanId: string,
): Promise<{ waiting: Promise<void>; release: () => Promise<void> }> {
  const sql_ = postgres(stack.config.databaseUrl, { max: 2 });
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holder = sql_.begin(async (tx) => {
    await tx`select id from loans where id = ${loanId} for update`;
    locked();
    await released;
  });
  await isLocked;
  const waiting = eventually(
    async () => {
      const [row] = await sql_`
      select count(*)::int as n from pg_stat_activity
      where wait_event_type = 'Lock' and query ilike '%from "loans"%for update%'`;
      return (row?.n ?? 0) > 0 ? true : undefined;
    },
    'a write to wait on the loan',
    // A worker process started just before bundles the workflows first: slow on a busy machine.
    90_000,
  ).then(() => undefined);
  return {
    waiting,
    release: async () => {
      release();
      await holder;
      await sql_.end();
    },
  };
}

/** The loan's transactions, in the order the money moved. */
const ledgerOf = (loanId: string) =>
  stack.database.db
    .select()
    .from(loanTransactions)
    .where(eq(loanTransactions.loanId, loanId))
    .orderBy(loanTransactions.occurredAt, loanTransactions.id);

const eventsOf = async (loanId: string, type: string) =>
  (
    await stack.database.db
      .select()
      .from(events)
      .where(and(eq(events.type, type), sql`${events.data}->>'id' = ${loanId}`))
  ).length;

describe('crash safety of the loan workflow', () => {
  it('a worker SIGKILLed mid-disbursement, then mid-payment: one disbursement, one payment under its reference (the partner’s retry answered 200, nothing twice), each event once', async () => {
    const setup = await stack.startWorker();
    const loan = await newLoan();
    await setup.stop();

    let doomed = await spawnWorkerProcess(stack);
    const signing = await api(`/v3/sandbox/loans/${loan.id}/signatures`, {
      method: 'POST',
      body: { cpf: loan.signers[0]!.cpf },
    });
    expect(signing.status).toBe(200);
    // SANDBOX_DISBURSEMENT_DELAY (2 s) from now, the disbursement's write will wait on this lock.
    const disbursing = await holdLoan(loan.id);
    await disbursing.waiting; // the disbursement's transaction is open, waiting on the row
    doomed.kill('SIGKILL');
    await disbursing.release();

    let worker = await stack.startWorker();
    try {
      await eventually(
        async () => ((await loanOf(loan.id)).status === 'active' ? true : undefined),
        'the disbursement retried by the new worker',
        90_000,
      );
    } finally {
      await worker.stop();
    }
    expect((await ledgerOf(loan.id)).map((t) => t.type)).toEqual(['disbursement']);
    expect(await eventsOf(loan.id, 'loan.active')).toBe(1);

    // The partner names the payment: row 1 at its value today (what the payoff quote says it is).
    const quote = (await (await api(`/v3/loans/${loan.id}/payoff`)).json()) as PayoffBody;
    const body = { amount: quote.rows[0]!.present_value, reference: 'crash-payment-1' };
    doomed = await spawnWorkerProcess(stack);
    const paying = await holdLoan(loan.id);
    let payment = pay(loan.id, body);
    // Until its write is seen waiting, a 503 is resent as a partner would (the same payment, the
    // same Update id): on a saturated machine the Update may not reach the new worker before the
    // API's deadline. A write that never comes still fails `waiting` after its 90 s.
    for (;;) {
      const first = await Promise.race([
        paying.waiting.then(() => 'write' as const),
        payment.then((response) => response.clone()),
      ]);
      if (first === 'write') break;
      // Any other answer is a finding, its body saying which refusal. (The 409 seen twice under
      // full load was the workflow not yet active in the task where the new worker met the
      // Update: now a 503, resent like any other.)
      if (first.status !== 503)
        throw new Error(
          `the payment answered ${first.status} before writing: ${await first.text()}`,
        );
      payment = pay(loan.id, body);
    }
    doomed.kill('SIGKILL');
    await paying.release();
    // The partner's request ends without a clear answer (the workflow did not finish in time).
    expect([200, 503]).toContain((await payment).status);

    worker = await stack.startWorker();
    try {
      // The killed attempt is given up after its heartbeat timeout (10 s) and retried here; on
      // CI's loaded cores that has taken over 90 s once, so the wait is longer and a timeout says
      // what the workflow was still running.
      await eventually(
        async () => ((await loanOf(loan.id)).paid_installments === 1 ? true : undefined),
        'the payment retried by the new worker',
        180_000,
      ).catch(async (error: unknown) => {
        const { raw } = await stack.temporal.workflow.getHandle(`loan/${loan.id}`).describe();
        const pending = raw.pendingActivities?.map((activity) => ({
          type: activity.activityType?.name,
          state: activity.state,
          attempt: activity.attempt,
          lastFailure: activity.lastFailure?.message,
        }));
        throw new Error(`${String(error)}; activities pending: ${JSON.stringify(pending)}`);
      });
      const recovered = await ledgerOf(loan.id);
      expect(recovered.map((t) => [t.type, t.reference, t.amount])).toEqual([
        ['disbursement', null, loan.requested_amount],
        ['payment', body.reference, body.amount],
      ]);
      expect(recovered[1]!.allocation?.map((part) => part.number)).toEqual([1]);
      const settled = await loanOf(loan.id);

      // The partner, who got no clear answer, sends the same request again: 200 with the loan as
      // it stands, and nothing recorded twice.
      const retried = await pay(loan.id, body);
      expect(retried.status).toBe(200);
      expect(((await retried.json()) as LoanBody).schedule).toEqual(settled.schedule);
      expect((await ledgerOf(loan.id)).map((t) => t.id)).toEqual(recovered.map((t) => t.id));
      expect(await eventsOf(loan.id, 'loan.payment_received')).toBe(1);
      // The killed attempts left no entry behind: each transaction has its entries once (no
      // account twice), balanced, and nothing else of the loan's is in the ledger.
      const posted = await entriesOf(
        stack.database.db,
        recovered.map((t) => t.id),
      );
      const counts = await entryCounts(loan.id);
      expect(Object.keys(counts).sort()).toEqual(recovered.map((t) => t.id).sort());
      for (const transaction of recovered) {
        const entries = posted.get(transaction.id)!;
        expect(counts[transaction.id]).toBe(entries.length);
        expect(new Set(entries.map((e) => e.account)).size).toBe(entries.length);
        expect(signedSum(entries)).toBe(0);
      }
      expect(posted.get(recovered[0]!.id)).toHaveLength(3); // principal, clearing, IOF
      expect(await reconcileLedger(stack.database.db)).toEqual([]);
    } finally {
      await worker.stop();
    }
  }, 360_000); // two lost activity attempts, each retried after its 10 s heartbeat timeout

  it('a write retried after its commit (a worker that died before reporting) writes nothing twice', async () => {
    const worker = await stack.startWorker();
    try {
      const loan = await activate(await newLoan());
      const activities = stack.activities();
      const tenant = { partnerId, environment: 'sandbox' as const };
      // The same input twice, as Temporal retries an activity whose worker died after its commit.
      const payment = {
        tenant,
        loanId: loan.id,
        payment: {
          reference: 'retried-write',
          amount: loan.schedule[0]!.installment_amount,
          paidAt: new Date().toISOString(),
          applyTo: 'next' as const,
          stated: { amount: true, paidAt: true },
        },
        transactionId: `txn_${'a'.repeat(32)}`,
        eventIds: { payment: `evt_${'b'.repeat(32)}`, finished: `evt_${'c'.repeat(32)}` },
      };
      const first = await activities.recordLoanPayment(payment);
      expect(first).toMatchObject({ paidInstallments: 1, finished: false, repeated: false });
      const second = await activities.recordLoanPayment(payment);
      expect(second).toEqual({ ...first, repeated: true });
      await activities.recordDisbursement({
        tenant,
        loanId: loan.id,
        at: new Date().toISOString(),
        transactionId: `txn_${'d'.repeat(32)}`,
        eventId: `evt_${'e'.repeat(32)}`,
      });
      expect((await ledgerOf(loan.id)).map((t) => t.type).sort()).toEqual([
        'disbursement',
        'payment',
      ]);
      expect((await ledgerOf(loan.id)).filter((t) => t.type === 'payment')).toEqual([
        expect.objectContaining({ id: payment.transactionId, reference: 'retried-write' }),
      ]);
      expect(await eventsOf(loan.id, 'loan.payment_received')).toBe(1);
      expect(await eventsOf(loan.id, 'loan.active')).toBe(1);
      expect(await reconcileLedger(stack.database.db)).toEqual([]);
    } finally {
      await worker.stop();
    }
  });

  it('a reference retried after the loan’s workflow continued as new: the same payment 200 and nothing recorded, another under it 409', async () => {
    const worker = await stack.startWorker();
    try {
      const loan = await activate(await newLoan(PAYMENTS_PER_RUN + 1));
      const workflow = stack.temporal.workflow.getHandle(`loan/${loan.id}`);
      const firstRun = (await workflow.describe()).runId;

      // PAYMENTS_PER_RUN small payments, each paying part of row 1: the run is full.
      for (let n = 1; n <= PAYMENTS_PER_RUN; n++) {
        const paid = await pay(loan.id, { amount: 100, reference: `r-${n}` });
        expect(paid.status).toBe(200);
      }
      const nextRun = await eventually(async () => {
        const { runId } = await workflow.describe();
        return runId !== firstRun ? runId : undefined;
      }, 'the loan’s workflow to continue as new');
      expect(
        (await stack.temporal.workflow.getHandle(`loan/${loan.id}`, firstRun).describe()).status
          .name,
      ).toBe('CONTINUED_AS_NEW');
      expect((await workflow.describe()).status.name).toBe('RUNNING');
      const paid = await loanOf(loan.id);
      expect(paid).toMatchObject({ status: 'active', paid_installments: 0 });
      expect(paid.schedule[0]!.paid_amount).toBe(PAYMENTS_PER_RUN * 100);
      const ledger = await ledgerOf(loan.id);
      const payments = () =>
        ledgerOf(loan.id).then((rows) => rows.filter((t) => t.type === 'payment'));
      expect((await payments()).map((t) => t.reference).sort()).toEqual(
        Array.from({ length: PAYMENTS_PER_RUN }, (_, i) => `r-${i + 1}`).sort(),
      );

      // r-1 again, the same request: 200 with the loan as it stands; nothing recorded.
      const again = await pay(loan.id, { amount: 100, reference: 'r-1' });
      expect(again.status).toBe(200);
      expect(((await again.json()) as LoanBody).schedule).toEqual(paid.schedule);
      // r-1 with another amount: 409, nothing recorded.
      const conflict = await pay(loan.id, { amount: 101, reference: 'r-1' });
      expect(conflict.status).toBe(409);
      expect(await conflict.json()).toMatchObject({ code: 'payment_reference_conflict' });

      // The new run never saw r-1: sent to it straight, the payment is found in the ledger.
      const r1 = ledger.find((t) => t.reference === 'r-1')!;
      const outcome = await workflow.executeUpdate(paymentUpdate, {
        args: [
          {
            reference: 'r-1',
            amount: 100,
            paidAt: r1.occurredAt.toISOString(),
            applyTo: 'next',
            stated: { amount: true, paidAt: true },
          },
        ],
      });
      expect(outcome).toEqual({
        paidInstallments: 0,
        lastUnpaid: PAYMENTS_PER_RUN + 1,
        finished: false,
        repeated: true,
      });

      expect((await ledgerOf(loan.id)).map((t) => t.id).sort()).toEqual(
        ledger.map((t) => t.id).sort(),
      );
      expect(await payments()).toHaveLength(PAYMENTS_PER_RUN);
      expect((await loanOf(loan.id)).schedule).toEqual(paid.schedule);
      expect(await eventsOf(loan.id, 'loan.payment_received')).toBe(PAYMENTS_PER_RUN);
      // A payment found in the ledger does not count towards the run: still the same run.
      expect((await workflow.describe()).runId).toBe(nextRun);
    } finally {
      await worker.stop();
    }
  }, 120_000);
});
