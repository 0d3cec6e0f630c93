/**
 * `npm run bench:ledger`: what the double-entry ledger costs a money movement, and how long the
 * trial balance takes over a large ledger.
 *
 * 1. Payments through the API: the production API and worker (`dist/`, as bench:api runs them,
 *    with a Temporal dev server and PostgreSQL of their own) and BENCH_PAYERS (default 16) active
 *    sandbox loans, each paid R$ 1.00 at a time by its own sequential client (`POST
 *    /ops/v1/loans/{id}/payments`: an Update of the loan's workflow, whose activity writes the
 *    transaction and its entries), for BENCH_SECONDS (default 10). The same load runs with the
 *    ledger and without it — PostgreSQL told to drop every entry (`create rule … do instead
 *    nothing`), so the code, the workflow and the request are the same and only the entries'
 *    writes and their balance check are missing — twice each, alternating; the better run counts.
 * 2. Postings alone: BENCH_MOVEMENTS (default 4,000) payment transactions written by 8 concurrent
 *    writers on a durable embedded PostgreSQL, each in its own database transaction as the
 *    activities write them — the transaction row alone, then the row with its entries through
 *    `postEntries` (checked balanced at commit by the deferred trigger).
 * 3. The trial balance over BENCH_LEDGER_SIZE (default 100,000) transactions of 5 entries each,
 *    bulk-loaded, timed over 5 reads.
 *
 * BENCH_SKIP_BUILD=1 reuses `dist/`; BENCH_PROFILE=dir writes a CPU profile of the API and the
 * worker; BENCH_LEDGER_PHASES picks phases (`api,postings`; default both).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { sql } from 'drizzle-orm';
import { createPartner } from '../src/commands/create-partner.js';
import { createDatabase } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';
import { postEntries, trialBalance } from '../src/db/queries/ledger.js';
import {
  customers,
  creditOffers,
  ledgerEntries,
  loans,
  loanTransactions,
  simulations,
} from '../src/db/schema/index.js';
import { startEmbeddedPostgres } from '../src/devstack/embedded-postgres.js';
import { startMailpit } from '../src/devstack/mailpit.js';
import { simulateLoan } from '../src/domain/credit/simulation.js';
import { paymentEntries } from '../src/domain/ledger/postings.js';
import { heapFlags } from '../src/main/node-flags.js';
import { activeLoan } from '../test/helpers/credit.js';
import { client, tokenFor } from '../test/helpers/partners.js';
import type { TestStack } from '../test/helpers/stack.js';
import {
  best,
  buildUnlessSkipped,
  cpuProfileFlags,
  formatRate,
  log as benchLog,
  productionEnv,
  startBenchStack,
  waitForReady,
  type Rate,
} from './support.js';
import { decreeIof } from '../test/helpers/iof.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const payers = Number(process.env.BENCH_PAYERS ?? 16);
const movements = Number(process.env.BENCH_MOVEMENTS ?? 4_000);
const ledgerSize = Number(process.env.BENCH_LEDGER_SIZE ?? 100_000);
const writers = 8;
const log = (line: string) => benchLog(`ledger: ${line}`);
const phases = new Set((process.env.BENCH_LEDGER_PHASES ?? 'api,postings').split(','));
const results: string[] = [];

if (phases.has('api')) await paymentsThroughApi();
if (phases.has('postings')) await postingsAndTrialBalance();
console.log('');
for (const line of results) console.log(line);

/** Phase 1: payments per second through the production API, with the ledger and without it. */
async function paymentsThroughApi(): Promise<void> {
  buildUnlessSkipped();
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const stack = await startBenchStack({
    name: 'ledger',
    postgresPort: 5493,
    temporalPort: 7293,
    temporalFile: true,
  });
  // Signing and biometrics codes go out by e-mail; the bench types the sandbox's published one.
  const mail = await startMailpit();
  const apiPort = 3993;
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const database = createDatabase(stack.databaseUrl, { max: 2 });
  try {
    const env = productionEnv(stack, { ...mail.env, SANDBOX_DISBURSEMENT_DELAY: '60d' });
    stack.spawn('dist/src/main/worker.js', env, [...heapFlags, ...cpuProfileFlags()]);
    stack.spawn('dist/src/main/api.js', { ...env, PORT: String(apiPort) }, [
      ...heapFlags,
      ...cpuProfileFlags(),
    ]);
    await waitForReady(`${apiUrl}/readyz`);
    const partner = await createPartner(database.db, { name: 'Bench' });
    const at = { baseUrl: apiUrl } as TestStack;
    const api = client(at, await tokenFor(at, partner.credentials.sandbox));
    const ops = client(at, env.OPS_TOKEN!);
    log(`taking ${payers} sandbox loans to active over the API…`);
    const loanIds = await Promise.all(
      Array.from({ length: payers }, async () => {
        const loan = await activeLoan(at, api, {
          opsToken: env.OPS_TOKEN!,
          size: 'largest',
          codes: { sandbox: true },
        });
        return loan.id;
      }),
    );

    let references = 0;
    const payments = async (title: string): Promise<Rate> => {
      const latencies: number[] = [];
      let failed = 0;
      const began = performance.now();
      const end = began + seconds * 1000;
      await Promise.all(
        loanIds.map(async (loanId) => {
          while (performance.now() < end) {
            const sent = performance.now();
            const response = await ops(`/ops/v1/loans/${loanId}/payments`, {
              method: 'POST',
              body: { amount: 100, reference: `bench-${++references}` },
            });
            await response.arrayBuffer();
            if (response.status === 200) latencies.push(performance.now() - sent);
            else failed++;
          }
        }),
      );
      const elapsed = (performance.now() - began) / 1000;
      latencies.sort((a, b) => a - b);
      const at = (q: number) => Math.round(latencies[Math.floor(q * (latencies.length - 1))] ?? 0);
      return {
        title,
        perSecond: latencies.length / elapsed,
        p50: at(0.5),
        p99: at(0.99),
        bad: failed,
      };
    };
    const entries = async () => await database.db.$count(ledgerEntries);
    const withLedger = async () => {
      const before = await entries();
      const rate = await payments('payments through the API, with the ledger');
      log(`${(await entries()) - before} entries posted`);
      return rate;
    };
    const withoutLedger = async () => {
      await database.db.execute(
        sql`create rule bench_no_ledger as on insert to ledger_entries do instead nothing`,
      );
      try {
        return await payments('the same, PostgreSQL dropping the entries');
      } finally {
        await database.db.execute(sql`drop rule bench_no_ledger on ledger_entries`);
      }
    };
    log(`payments: ${seconds} s runs, ${payers} loans paid at once, each side twice…`);
    await payments('warm-up');
    const ledgered1 = await withLedger();
    const bare1 = await withoutLedger();
    const ledgered = best(ledgered1, await withLedger());
    const bare = best(bare1, await withoutLedger());
    results.push(
      formatRate(ledgered),
      formatRate(bare),
      `payments through the API: with the ledger / without ${(ledgered.perSecond / bare.perSecond).toFixed(2)}`,
    );
  } finally {
    await database.close();
    await mail.stop();
    await stack.stop();
  }
}

/** Phases 2 and 3: the postings alone on a durable PostgreSQL, then the trial balance. */
async function postingsAndTrialBalance(): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'bench-ledger-'));
  const postgres = await startEmbeddedPostgres({
    dataDir: join(scratch, 'pg'),
    port: 5498,
    database: 'bench',
  });
  const database = createDatabase(postgres.url, { max: writers + 2 });
  const db = database.db;
  const tenant = { partnerId: 'ptn_bench', environment: 'sandbox' as const };

  try {
    await runMigrations(postgres.url);
    const figures = simulateLoan({
      requestedAmount: 1_000_000,
      installments: 12,
      monthlyInterestRate: '0.0199',
      releaseDate: '2026-11-25',
      firstDueDate: '2026-12-25',
      borrower: 'individual',
      iof: decreeIof,
    });
    const now = new Date();
    await db.insert(customers).values({
      id: 'cust_bench',
      ...tenant,
      status: 'active',
      cpf: '52998224725',
      name: 'Bench',
      email: 'bench@example.com',
      phone: '+5511987654321',
      kyc: [],
    });
    await db.insert(creditOffers).values({
      id: 'co_bench',
      ...tenant,
      customerId: 'cust_bench',
      status: 'accepted',
      approvedAmount: 1_000_000,
      minAmount: 10_000,
      monthlyInterestRate: '0.0199',
      minInstallments: 1,
      maxInstallments: 24,
      validUntil: now,
    });
    await db.insert(simulations).values({
      id: 'sim_bench',
      ...tenant,
      creditOfferId: 'co_bench',
      customerId: 'cust_bench',
      figures,
      validUntil: now,
    });
    await db.insert(loans).values({
      id: 'ln_bench',
      ...tenant,
      customerId: 'cust_bench',
      creditOfferId: 'co_bench',
      simulationId: 'sim_bench',
      status: 'active',
      figures,
      disbursementAccount: { type: 'pix', pix_key: 'bench@example.com', pix_key_type: 'email' },
      contractSha256: '0'.repeat(64),
      contractKey: 'contracts/ln_bench.pdf',
      signingTokenHash: randomUUID(),
      signatureDeadline: now,
    });

    /** `count` movements by `writers` concurrent writers; each its own database transaction. */
    const run = async (count: number, withEntries: boolean) => {
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: writers }, async () => {
          for (let i = next++; i < count; i = next++) {
            const id = `txn_${randomUUID().replaceAll('-', '')}`;
            await db.transaction(async (tx) => {
              await tx.insert(loanTransactions).values({
                id,
                ...tenant,
                loanId: 'ln_bench',
                step: id,
                type: 'payment',
                amount: 34_983,
                occurredAt: now,
              });
              if (withEntries)
                await postEntries(
                  tx,
                  tenant,
                  { id, loanId: 'ln_bench', occurredAt: now },
                  paymentEntries({
                    amount: 34_983,
                    principal: 32_975,
                    interest: 2_008,
                    lateFee: 0,
                    lateInterest: 0,
                  }),
                );
            });
          }
        }),
      );
      return count / ((performance.now() - started) / 1000);
    };
    await run(200, true); // warm-up
    const bare = await run(movements, false);
    const ledgered = await run(movements, true);
    results.push(
      `postings alone, movements/s, ${writers} writers, durable commits: transaction row alone ${bare.toFixed(0)}, with its 3 entries ${ledgered.toFixed(0)} (${((ledgered / bare) * 100).toFixed(0)} %)`,
    );

    log(`loading ${ledgerSize.toLocaleString('en')} transactions of 5 entries…`);
    await db.execute(sql`
      insert into loan_transactions (id, partner_id, environment, loan_id, step, type, amount, occurred_at)
      select 'txn_bulk_' || g, 'ptn_bench', 'sandbox', 'ln_bench', 'bulk:' || g, 'payment', 36875,
             now() - (g % 365) * interval '1 day'
      from generate_series(1, ${ledgerSize}) g`);
    await db.execute(sql`
      insert into ledger_entries (transaction_id, partner_id, environment, loan_id, account, direction, amount, occurred_at)
      select 'txn_bulk_' || g, 'ptn_bench', 'sandbox', 'ln_bench', e.account, e.direction, e.amount,
             now() - (g % 365) * interval '1 day'
      from generate_series(1, ${ledgerSize}) g,
           (values ('collections_clearing', 'debit', 36875), ('loan_principal', 'credit', 30000),
                   ('interest_income', 'credit', 5000), ('late_fee_income', 'credit', 700),
                   ('late_interest_income', 'credit', 1175)) as e(account, direction, amount)`);
    await db.execute(sql`analyze ledger_entries`);
    const timings: number[] = [];
    let accounts = 0;
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      accounts = (await trialBalance(db, 'sandbox', '2030-01-01')).length;
      timings.push(performance.now() - started);
    }
    timings.sort((a, b) => a - b);
    results.push(
      `trial balance over ${(ledgerSize + movements + 200).toLocaleString('en')} posted transactions (${accounts} accounts): median ${timings[2]!.toFixed(0)} ms, best ${timings[0]!.toFixed(0)} ms`,
    );
  } finally {
    await database.close();
    await postgres.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}
