import { createServer, connect, type Server, type Socket } from 'node:net';
import { and, eq, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { reconcileLedger } from '../../src/db/queries/ledger.js';
import { events, loanTransactions, payouts } from '../../src/db/schema/index.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { spawnWorkerProcess } from '../helpers/worker-process.js';

/**
 * Contract §16: the PSP receives exactly one payout per claim whatever fails. A worker is
 * SIGKILLed (1) after the claim, the payout stored but its call not yet through to the PSP, and
 * (2) after the PSP made the payout, before its answer was recorded; a new worker resumes, and the
 * simulator's account holds one payout for the loan, which ends active once.
 */
let stack: TestStack;
let production: Client;

beforeAll(async () => {
  // No worker of the stack's own: the tests start, kill and replace them.
  stack = await startStack({ worker: false, env: { SANDBOX_REVIEW_DELAY: '1h' } });
  const partner = await createPartner(stack);
  production = client(stack, await tokenFor(stack, partner.credentials.production));
});
afterAll(async () => {
  await stack?.stop();
});

/**
 * A TCP relay on loopback in front of the run's PSP simulator: while `open` is false it drops
 * every connection (the PSP unreachable), then it passes bytes through untouched (TLS end to end).
 */
async function pspRelay(): Promise<{ url: string; open(): void; close(): Promise<void> }> {
  const target = new URL(inject('pspSimulator').url);
  let open = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    if (!open) return socket.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(target);
  url.port = String(port);
  return {
    url: url.toString().replace(/\/$/, ''),
    open: () => (open = true),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type SimulatedPayout = { id: string; idempotencyKey: string; status: string; amount: number };

/** The payouts of this stack's account at the simulator with this idempotency key. */
const payoutsAtPsp = async (key: string) =>
  (
    (await stack.psp!.control('GET', `/clients/${stack.psp!.clientId}/payouts`)) as {
      body: { payouts: SimulatedPayout[] };
    }
  ).body.payouts.filter((payout) => payout.idempotencyKey === key);

const storedPayout = async (loanId: string) =>
  (await stack.database.db.select().from(payouts).where(eq(payouts.loanId, loanId)))[0];

const loanOf = (id: string) => json<LoanBody>(production(`/v3/loans/${id}`));

const claim = async (loanId: string) => {
  const response = await fetch(`${stack.baseUrl}/ops/v1/loans/${loanId}/disbursement/claim`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(response.status).toBe(200);
};

/** A production loan, signed and waiting for its disbursement (made with a worker of the stack). */
async function signedLoan(): Promise<LoanBody> {
  const worker = await stack.startWorker();
  try {
    return await activeLoan(stack, production, {
      opsToken: OPS_TOKEN,
      production: true,
      signedOnly: true,
    });
  } finally {
    await worker.stop();
  }
}

/** What the loan's record says once a new worker finished: one disbursement, one `loan.active`. */
async function activeOnce(loan: LoanBody, key: string): Promise<void> {
  expect(await payoutsAtPsp(key)).toEqual([
    expect.objectContaining({ amount: loan.requested_amount, status: 'confirmed' }),
  ]);
  const transactions = await stack.database.db
    .select()
    .from(loanTransactions)
    .where(eq(loanTransactions.loanId, loan.id));
  expect(transactions.map((t) => t.type)).toEqual(['disbursement']);
  const activations = await stack.database.db
    .select()
    .from(events)
    .where(and(eq(events.type, 'loan.active'), sql`${events.data}->>'id' = ${loan.id}`));
  expect(activations).toHaveLength(1);
  expect(await storedPayout(loan.id)).toMatchObject({ status: 'confirmed' });
  expect(await reconcileLedger(stack.database.db)).toEqual([]);
}

describe('a payout across a worker’s crash (contract §16)', () => {
  it('killed after the claim, its payout stored but not yet through to the PSP: the new worker sends it, once', async () => {
    const loan = await signedLoan();
    const relay = await pspRelay();
    const doomed = await spawnWorkerProcess(stack, { env: { PSP_API_URL: relay.url } });
    try {
      await claim(loan.id);
      // The payout is stored before the call, and the call cannot reach the PSP.
      const stored = await eventually(
        async () => {
          const payout = await storedPayout(loan.id);
          return payout?.status === 'sending' ? payout : undefined;
        },
        'the payout stored',
        60_000,
      );
      expect(await payoutsAtPsp(stored.id)).toEqual([]);
      doomed.kill('SIGKILL');
    } finally {
      doomed.kill('SIGKILL');
      await relay.close();
    }
    expect((await loanOf(loan.id)).status).toBe('processing');

    const worker = await stack.startWorker();
    try {
      await eventually(
        async () => ((await loanOf(loan.id)).status === 'active' ? true : undefined),
        'the payout sent by the new worker',
        90_000,
      );
      await activeOnce(loan, (await storedPayout(loan.id))!.id);
    } finally {
      await worker.stop();
    }
  }, 150_000);

  it('killed after the PSP made the payout, before its answer was recorded: the new worker’s retry gets the same payout back', async () => {
    const loan = await signedLoan();
    // This account's payouts wait for a control: the outcome comes after the crash.
    await stack.psp!.control('PUT', '/payouts/policy', {
      outcome: 'pending',
      client: stack.psp!.clientId,
    });
    const relay = await pspRelay();
    const locker = postgres(stack.config.databaseUrl, { max: 2 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holder: Promise<unknown> | undefined;
    const doomed = await spawnWorkerProcess(stack, { env: { PSP_API_URL: relay.url } });
    let key: string;
    try {
      await claim(loan.id);
      key = (
        await eventually(
          async () => {
            const payout = await storedPayout(loan.id);
            return payout?.status === 'sending' ? payout : undefined;
          },
          'the payout stored',
          60_000,
        )
      ).id;
      // Its row locked here, the PSP reachable again: the next attempt makes the payout at the PSP
      // and then waits to record the answer.
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      holder = locker.begin(async (tx) => {
        await tx`select id from payouts where id = ${key} for update`;
        locked();
        await released;
      });
      await isLocked;
      relay.open();
      await eventually(
        async () => ((await payoutsAtPsp(key)).length === 1 ? true : undefined),
        'the payout made at the PSP',
        60_000,
      );
      await eventually(
        async () => {
          const [row] = await locker`
            select count(*)::int as n from pg_stat_activity
            where wait_event_type = 'Lock' and query ilike '%"payouts"%for update%'`;
          return (row?.n ?? 0) > 0 ? true : undefined;
        },
        'the answer waiting to be recorded',
        30_000,
      );
      doomed.kill('SIGKILL');
    } finally {
      doomed.kill('SIGKILL');
      release();
      await holder;
      await locker.end();
      await relay.close();
      await stack.psp!.control('PUT', '/payouts/policy', {
        outcome: 'confirmed',
        client: stack.psp!.clientId,
      });
    }
    expect(await storedPayout(loan.id)).toMatchObject({ status: 'sending' });

    const worker = await stack.startWorker();
    try {
      // The killed attempt is retried after its heartbeat timeout: the same key, the PSP's
      // first payout answered back (pending), recorded.
      const pending = await eventually(
        async () => {
          const payout = await storedPayout(loan.id);
          return payout?.status === 'pending' ? payout : undefined;
        },
        'the answer recorded by the new worker',
        90_000,
      );
      expect(await payoutsAtPsp(key)).toEqual([
        expect.objectContaining({ id: pending.pspPayoutId }),
      ]);
      const settled = (await stack.psp!.control(
        'POST',
        `/payouts/${pending.pspPayoutId}/confirm`,
      )) as {
        body: { notified: unknown };
      };
      expect(settled.body.notified).toBe(200);
      await eventually(
        async () => ((await loanOf(loan.id)).status === 'active' ? true : undefined),
        'the loan active',
      );
      await activeOnce(loan, key);
    } finally {
      await worker.stop();
    }
  }, 180_000);
});
