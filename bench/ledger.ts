/**
 * `npm run bench:ledger`: what the double-entry ledger costs a money movement, and how long the
 * trial balance takes over a large ledger, on a real (embedded, durable) PostgreSQL.
 *
 * 1. Postings: BENCH_MOVEMENTS (default 4,000) payment transactions written by 8 concurrent
 *    writers, each in its own database transaction as the activities write them — first the
 *    transaction row alone (the baseline: what a movement cost before the ledger), then the row
 *    with its entries through `postEntries` (checked balanced at commit by the deferred trigger).
 * 2. The trial balance over BENCH_LEDGER_SIZE (default 100,000) transactions of 5 entries each,
 *    bulk-loaded, timed over 5 reads.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { createDatabase } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';
import { postEntries, trialBalance } from '../src/db/queries/ledger.js';
import {
  customers,
  creditOffers,
  loans,
  loanTransactions,
  simulations,
} from '../src/db/schema/index.js';
import { startEmbeddedPostgres } from '../src/devstack/embedded-postgres.js';
import { simulateLoan } from '../src/domain/credit/simulation.js';
import { paymentEntries } from '../src/domain/ledger/postings.js';

const movements = Number(process.env.BENCH_MOVEMENTS ?? 4_000);
const ledgerSize = Number(process.env.BENCH_LEDGER_SIZE ?? 100_000);
const writers = 8;
const log = (line: string) => console.log(`[bench:ledger] ${line}`);

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
    iof: {
      flat: '0.0038',
      dailyIndividual: '0.000082',
      dailyCompany: '0.000082',
      dailyMei: '0.0000274',
      meiPrincipalLimitAmount: 3_000_000,
    },
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
  log(
    `movements/s, ${writers} writers, durable commits: transaction row alone ${bare.toFixed(0)}, with its 3 entries ${ledgered.toFixed(0)} (${((ledgered / bare) * 100).toFixed(0)} %)`,
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
  log(
    `trial balance over ${(ledgerSize + movements + 200).toLocaleString('en')} posted transactions (${accounts} accounts): median ${timings[2]!.toFixed(0)} ms, best ${timings[0]!.toFixed(0)} ms`,
  );
} finally {
  await database.close();
  await postgres.stop();
  await rm(scratch, { recursive: true, force: true });
}
