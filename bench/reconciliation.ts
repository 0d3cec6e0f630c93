/**
 * `npm run bench:reconciliation`: how long the daily reconciliation (contract §16) takes for a day
 * of BENCH_PIX (default 100,000) Pix, beside a baseline in the same run: the raw time to page the
 * same day's Pix from the PSP (`PspClient.listPix`, 1,000 a page) without comparing anything.
 *
 * The stack: a PostgreSQL, a Temporal dev server and a PSP simulator of the bench's own
 * (bench/support.ts). The simulator's day: BENCH_PIX Pix to the lender's key, spread over
 * yesterday (São Paulo), added by its bulk control. The service's side: all of them but
 * BENCH_DROPPED (default 100) written straight into `received_pix` with their ledger postings, as
 * unmatched Pix the notifications brought (the notification path itself is bench:pix's; writing
 * 100,000 through it would take the bench a quarter of an hour and measure it again). The dropped
 * ones are what the reconciliation must find, store and book, through `receivePix` as its activity
 * does; a rerun then finds nothing to store.
 *
 * Timed: the baseline (twice, before and after), the first run and the rerun, each the whole of
 * `reconcileDay` — listing, the service's day in one snapshot, storing what is missing, the
 * devolucoes' listing, the comparison and the report's write. Loopback only.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { receivePix } from '../src/commands/receive-pix.js';
import { createDatabase } from '../src/db/client.js';
import {
  clearingOfDay,
  findReconciliationReport,
  storedPixOfDay,
} from '../src/db/queries/reconciliation.js';
import { freePort } from '../src/devstack/free-port.js';
import { addDays, businessDate } from '../src/domain/business-date.js';
import { createLogger } from '../src/logger.js';
import { PspClient } from '../src/psp/client.js';
import { valorOf } from '../src/psp/valor.js';
import { dayWindow, reconcileDay } from '../src/reconciliation/reconcile-day.js';
import { benchTemporalClient, log, startBenchStack } from './support.js';

const PIX = Number(process.env.BENCH_PIX ?? 100_000);
const DROPPED = Number(process.env.BENCH_DROPPED ?? 100);
const SLICE = 10_000;

const stack = await startBenchStack({
  name: 'reconciliation',
  postgresPort: await freePort(),
  temporalPort: await freePort(),
});
const database = createDatabase(stack.databaseUrl, { max: 4 });
const temporal = await benchTemporalClient(stack.temporalAddress);
const env = stack.pspEnv;
const psp = new PspClient({
  apiUrl: env.PSP_API_URL!,
  clientId: env.PSP_CLIENT_ID!,
  clientSecret: env.PSP_CLIENT_SECRET!,
  tls: {
    cert: readFileSync(env.PSP_TLS_CERT!, 'utf8'),
    key: readFileSync(env.PSP_TLS_KEY!, 'utf8'),
    ca: readFileSync(env.PSP_TLS_CA!, 'utf8'),
  },
});
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

try {
  const date = addDays(businessDate(new Date()), -1);
  const day = dayWindow(date);
  const span = day.to.getTime() - day.from.getTime();

  // The PSP's day.
  let started = performance.now();
  const ids: { endToEndId: string; amount: number; horario: string }[] = [];
  for (let at = 0; at < PIX; at += SLICE) {
    const pix = Array.from({ length: Math.min(SLICE, PIX - at) }, (_, i) => {
      const amount = 100 + ((at + i) % 99_900);
      const horario = new Date(day.from.getTime() + Math.floor(((at + i) / PIX) * span));
      return { valor: valorOf(amount), horario: horario.toISOString(), amount };
    });
    const answer = (await stack.psp.control('POST', '/pix', {
      pix: pix.map(({ valor, horario }) => ({ valor, horario })),
    })) as { status: number; body: { endToEndIds: string[] } };
    if (answer.status !== 201) throw new Error(`the simulator refused: ${JSON.stringify(answer)}`);
    answer.body.endToEndIds.forEach((endToEndId, i) =>
      ids.push({ endToEndId, amount: pix[i]!.amount, horario: pix[i]!.horario }),
    );
  }
  log(`${PIX} Pix at the PSP on ${date} in ${seconds(performance.now() - started)}`);

  // The service's side: every Pix but the dropped ones, stored unmatched with their postings.
  started = performance.now();
  const kept = ids.filter(
    (_, i) => i % Math.floor(PIX / Math.max(DROPPED, 1)) !== 0 || DROPPED === 0,
  );
  const dropped = PIX - kept.length;
  for (let at = 0; at < kept.length; at += SLICE) {
    const rows = kept.slice(at, at + SLICE).map((pix) => ({
      ...pix,
      receipt: `txn_${randomBytes(16).toString('hex')}`,
    }));
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`
        insert into received_pix (end_to_end_id, source, status, amount, paid_at, environment)
        select e2e, 'psp', 'unmatched', amount, horario, null
        from json_to_recordset(${JSON.stringify(rows.map((r) => ({ e2e: r.endToEndId, amount: r.amount, horario: r.horario })))}::json)
          as t(e2e text, amount bigint, horario timestamptz)`);
      await tx.execute(sql`
        insert into receipt_transactions (id, end_to_end_id, environment, type, amount, occurred_at)
        select id, e2e, 'production', 'received', amount, horario
        from json_to_recordset(${JSON.stringify(rows.map((r) => ({ id: r.receipt, e2e: r.endToEndId, amount: r.amount, horario: r.horario })))}::json)
          as t(id text, e2e text, amount bigint, horario timestamptz)`);
      await tx.execute(sql`
        insert into ledger_entries (receipt_transaction_id, environment, account, direction, amount, occurred_at)
        select r.id, 'production', a.account, a.direction, r.amount, r.occurred_at
        from receipt_transactions r
        cross join (values ('collections_clearing', 'debit'), ('unidentified_receipts', 'credit'))
          as a(account, direction)
        where r.id in (select id from json_to_recordset(${JSON.stringify(rows.map((r) => ({ id: r.receipt })))}::json) as t(id text))`);
    });
  }
  await database.db.execute(sql`analyze`);
  log(
    `${kept.length} of them stored and posted by the service, ${dropped} dropped, in ${seconds(performance.now() - started)}`,
  );

  const logger = createLogger('error', 'bench');
  const deps = {
    db: database.db,
    psp,
    storeMissing: async (pixes: Parameters<typeof receivePix>[3], on: string) => {
      await receivePix(
        { db: database.db, temporal, logger, taskQueue: 'bench-reconciliation' },
        'production',
        'psp',
        pixes,
        { reconciliationDate: on },
      );
    },
  };
  const baseline = async () => {
    const begin = performance.now();
    const listed = await psp.listPix(day.from, new Date(day.to.getTime() - 1));
    if (listed.length !== PIX) throw new Error(`listed ${listed.length}, not ${PIX}`);
    return performance.now() - begin;
  };
  const run = async () => {
    const begin = performance.now();
    const result = await reconcileDay(deps, date);
    return { ms: performance.now() - begin, result };
  };

  // The simulator sorts a listing once and keeps it until its state changes: warmed first, so
  // every timing below reads the PSP as a PSP would answer, not the simulator's first sort.
  await baseline();
  const before = await baseline();
  const first = await run();
  const after = await baseline();
  const rerun = await run();
  const report = await findReconciliationReport(database.db, date);
  // Where a run's time goes: the service's day read with each Pix's ledger debit, and the
  // clearing account's movement (the rest: the PSP's pages, the comparison, the report's write).
  const timed = async (what: () => Promise<unknown>) => {
    const begin = performance.now();
    await what();
    return performance.now() - begin;
  };
  const storedMs = await timed(() => storedPixOfDay(database.db, day));
  const clearingMs = await timed(() => clearingOfDay(database.db, day));

  const kinds = (result: typeof first.result) =>
    JSON.stringify(
      result.discrepancies.reduce<Record<string, number>>((counts, d) => {
        counts[`${d.kind}/${d.action}`] = (counts[`${d.kind}/${d.action}`] ?? 0) + 1;
        return counts;
      }, {}),
    );
  log(
    `baseline, paging the PSP's ${PIX} Pix of the day (1,000 a page): ${seconds(before)}, then ${seconds(after)}`,
  );
  log(
    `reconciliation, first run: ${seconds(first.ms)} — ${first.result.status}, stored ${first.result.stored}, discrepancies ${kinds(first.result)}`,
  );
  log(
    `reconciliation, rerun: ${seconds(rerun.ms)} — ${rerun.result.status}, stored ${rerun.result.stored}, discrepancies ${kinds(rerun.result)}`,
  );
  log(
    `of which (each read alone): the service's day with each Pix's ledger debit ${seconds(storedMs)}, the clearing account's movement ${seconds(clearingMs)}`,
  );
  log(
    `report: psp ${report?.report.pspPixCount} Pix ${report?.report.pspPixAmount} centavos; booked ${report?.report.bookedPixCount} Pix ${report?.report.bookedPixAmount} centavos; collections_clearing Pix debits ${report?.report.collectionsClearingPixDebits}`,
  );
  if (
    first.result.stored !== dropped ||
    rerun.result.stored !== 0 ||
    rerun.result.status !== 'matched'
  )
    throw new Error(
      'the reconciliation did not find exactly the dropped Pix, or the rerun was not matched',
    );
} finally {
  psp.close();
  await temporal.connection.close();
  await database.close();
  await stack.stop();
}
