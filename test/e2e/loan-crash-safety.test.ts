import { and, eq, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { events, loanTransactions } from '../../src/db/schema/index.js';
import type { simulationSchema } from '../../src/http/routes/credit-offers/schema.js';
import type { loanSchema } from '../../src/http/routes/loans/schema.js';
import { activeCustomer, offerOf } from '../helpers/credit.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';
import { spawnWorkerProcess } from '../helpers/worker-process.js';

type LoanBody = z.infer<typeof loanSchema>;
type SimulationBody = z.infer<typeof simulationSchema>;

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

async function newLoan(): Promise<LoanBody> {
  const customer = await activeCustomer(stack, api);
  const offer = await offerOf(api, customer.id);
  const sim = (await (
    await api(`/v3/credit-offers/${offer.id}/simulations`, {
      method: 'POST',
      body: { amount: offer.min_amount, installments: 3 },
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

const loanOf = async (id: string) => (await (await api(`/v3/loans/${id}`)).json()) as LoanBody;

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

const ledgerOf = (loanId: string) =>
  stack.database.db.select().from(loanTransactions).where(eq(loanTransactions.loanId, loanId));

const eventsOf = async (loanId: string, type: string) =>
  (
    await stack.database.db
      .select()
      .from(events)
      .where(and(eq(events.type, type), sql`${events.data}->>'id' = ${loanId}`))
  ).length;

describe('crash safety of the loan workflow', () => {
  it('a worker SIGKILLed mid-disbursement, then mid-payment: one disbursement, one payment, each event once', async () => {
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

    doomed = await spawnWorkerProcess(stack);
    const paying = await holdLoan(loan.id);
    const payment = api(`/v3/sandbox/loans/${loan.id}/payments`, { method: 'POST', body: {} });
    await paying.waiting;
    doomed.kill('SIGKILL');
    await paying.release();
    // The partner's request ends without a clear answer (the workflow did not finish in time).
    expect([200, 503]).toContain((await payment).status);

    worker = await stack.startWorker();
    try {
      await eventually(
        async () => ((await loanOf(loan.id)).paid_installments === 1 ? true : undefined),
        'the payment retried by the new worker',
        90_000,
      );
    } finally {
      await worker.stop();
    }
    const ledger = await ledgerOf(loan.id);
    expect(ledger.map((t) => [t.type, t.installmentNumber])).toEqual([
      ['disbursement', null],
      ['payment', 1],
    ]);
    expect(await eventsOf(loan.id, 'loan.payment_received')).toBe(1);
  }, 240_000); // two lost activity attempts, each retried after its 30 s start-to-close timeout

  it('a write retried after its commit (a worker that died before reporting) writes nothing twice', async () => {
    const worker = await stack.startWorker();
    try {
      const loan = await newLoan();
      await api(`/v3/sandbox/loans/${loan.id}/signatures`, {
        method: 'POST',
        body: { cpf: loan.signers[0]!.cpf },
      });
      await eventually(
        async () => ((await loanOf(loan.id)).status === 'active' ? true : undefined),
        'the loan active',
      );
      const activities = stack.activities();
      const tenant = { partnerId, environment: 'sandbox' as const };
      const payment = {
        tenant,
        loanId: loan.id,
        installmentNumber: 1,
        amount: loan.schedule[0]!.installment_amount,
        paidAt: new Date().toISOString(),
        last: false,
        transactionId: `txn_${'a'.repeat(32)}`,
        eventIds: { payment: `evt_${'b'.repeat(32)}`, finished: `evt_${'c'.repeat(32)}` },
      };
      await activities.recordPayment(payment);
      await activities.recordPayment(payment);
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
      expect(await eventsOf(loan.id, 'loan.payment_received')).toBe(1);
      expect(await eventsOf(loan.id, 'loan.active')).toBe(1);
    } finally {
      await worker.stop();
    }
  });
});
