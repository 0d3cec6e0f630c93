/**
 * `npm run bench:pix`: how long a Pix takes from the PSP's notification to its booking — from the
 * moment `POST /psp/v1/pix` is sent to the commit of the transaction that writes
 * `loan.payment_received` — beside a baseline of the same loans paid the same R$ 1.00 through the
 * ops API (`POST /ops/v1/loans/{id}/payments`, which books synchronously through the loan
 * workflow's Update), in the same run.
 *
 * The stack: the production API and worker (`dist/`, as bench:ledger runs them) on a PostgreSQL
 * and a Temporal dev server (SQLite on disk) of the bench's own, and Mailpit, where the
 * production customers' KYC and signing codes are read. BENCH_PAYERS (default 10) production
 * loans are taken to `active` over HTTP (`activeLoan`: KYC, ops' credit decision and review, the
 * hosted signing page with the e-mailed code, ops' disbursement). Then each loan, by its own
 * sequential client, repeats until BENCH_NOTIFICATIONS (default 1,000) notifications in all:
 *
 * - a charge, `POST /v3/loans/{id}/charges {scope: "amount", amount: 100}` (not timed);
 * - the PSP's notification of a Pix of R$ 1.00 to its txid, signed (`Pix-Signature`), timed until
 *   its `loan.payment_received` is committed (the Pix is stored, answered 200, and booked later
 *   through its `pix/{e2e}` workflow and the loan's workflow);
 * - an ops payment of R$ 1.00, timed the same way (the baseline: the loan's Update, answered once
 *   booked).
 *
 * The two alternate on each loan (PSP first on even rounds, ops first on odd ones, and the other
 * way round on every other loan), so machine noise, the loan workflow's continue-as-new (every 12
 * payments) and the growing tables hit both alike. BENCH_WARMUP (default 2) rounds per loan are
 * run first and not counted.
 *
 * How the latency is measured, and why this way: the end is the commit time of the transaction
 * that inserted the event row, `pg_xact_commit_timestamp(xmin)` (PostgreSQL's clock, microseconds;
 * the bench turns `track_commit_timestamp` on for its own server before anything runs), and the
 * start is the wall time taken just before `fetch` (`performance.timeOrigin + performance.now()`,
 * sub-millisecond). PostgreSQL runs on this machine, so both read the same system clock. That is
 * more precise than the alternatives: the event's `created_at` is `now()`, the *start* of the
 * booking transaction, at millisecond precision (it misses the booking's own transaction; it is
 * printed beside, as is its gap to the commit); polling for the event would add up to an interval
 * plus a query's round trip to every sample and put its own load on the two cores. The bench never
 * polls: a trigger on `events` (bench-only, created in the bench's database) sends a NOTIFY with
 * the payment's reference, delivered at commit, and the payer waits on its LISTEN to go on; the
 * time that notification reached the bench is printed as a cross-check (it is the commit plus the
 * delivery to a client).
 *
 * Where the time goes, for BENCH_HISTORY_SAMPLE (default 200) payments of each kind: medians of
 * each moment from sending, read off the rows the path writes (`received_pix.received_at`, the
 * storing transaction's start; the outbox row's `started_at`, written once Temporal accepted the
 * `pix/{e2e}` start; the event's `created_at` and commit) and off the Temporal histories of the
 * Pix's workflow and of every run of the loans' workflows (when the server recorded the start, each
 * workflow task's outcome — an activity scheduled, an Update accepted or completed — and each
 * activity picked up and completed). Then the CPU each process used in the measured phase
 * (/proc), and what the rest of the machine used meanwhile (other work on a shared machine).
 *
 * BENCH_SKIP_BUILD=1 reuses `dist/`; BENCH_PROFILE=dir writes a CPU profile of the API and the
 * worker. Everything listens and connects on the loopback only.
 */
import { spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createPartner } from '../src/commands/create-partner.js';
import { createDatabase } from '../src/db/client.js';
import { startMailpit } from '../src/devstack/mailpit.js';
import { signPspBody } from '../src/domain/pix/psp-signature.js';
import { heapFlags } from '../src/main/node-flags.js';
import { activeLoan } from '../test/helpers/credit.js';
import { moneyDesk } from '../test/helpers/operators.js';
import { client, tokenFor } from '../test/helpers/partners.js';
import type { TestStack } from '../test/helpers/stack.js';
import {
  buildUnlessSkipped,
  cpuProfileFlags,
  log as benchLog,
  productionEnv,
  startBenchStack,
  waitForReady,
} from './support.js';

const payers = Number(process.env.BENCH_PAYERS ?? 10);
const notifications = Number(process.env.BENCH_NOTIFICATIONS ?? 1_000);
const warmupRounds = Number(process.env.BENCH_WARMUP ?? 2);
/** Payments of each kind whose Temporal histories are read for the breakdown. */
const historySample = Number(process.env.BENCH_HISTORY_SAMPLE ?? 200);
/** A payment not booked by then fails the run. */
const bookingTimeoutMs = 60_000;
const log = (line: string) => benchLog(`pix: ${line}`);
/** Units of /proc's CPU times. */
const clockTicks = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/** Wall-clock milliseconds with the monotonic clock's resolution (sub-millisecond). */
const wallNow = () => performance.timeOrigin + performance.now();

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
let e2eCount = 0;
/**
 * An end-to-end id in the payment system's form: `E`, an ISPB (8 digits), `yyyyMMddHHmm` in UTC,
 * 11 alphanumerics (here a run-unique counter, so no two notifications share one).
 */
function endToEndId(at: Date): string {
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 12);
  let n = e2eCount++;
  let tail = '';
  for (let i = 0; i < 11; i++, n = Math.floor(n / ALPHANUMERIC.length))
    tail = ALPHANUMERIC[n % ALPHANUMERIC.length]! + tail;
  return `E12345678${stamp}${tail}`;
}

interface Stats {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentiles (of the values there are: a missing moment is NaN). */
function stats(values: readonly number[]): Stats {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { n: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) };
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '—').padStart(7);
const formatStats = (title: string, s: Stats) =>
  `${title.padEnd(58)} n=${String(s.n).padStart(4)}  p50 ${ms(s.p50)} ms  p90 ${ms(s.p90)} ms  p99 ${ms(s.p99)} ms  max ${ms(s.max)} ms`;
const median = (values: readonly number[]) => stats(values).p50;

buildUnlessSkipped();
Runtime.install({ logger: new DefaultLogger('WARN') });
const stack = await startBenchStack({
  name: 'pix',
  postgresPort: 5495,
  temporalPort: 7295,
  temporalFile: true,
});
const mail = await startMailpit();
const apiPort = 3995;
const apiUrl = `http://127.0.0.1:${apiPort}`;
let database = createDatabase(stack.ownerDatabaseUrl, { max: 4 });
const results: string[] = [];
try {
  // Commit times of rows, for the end of each span (see the header). The setting needs a restart,
  // done before the API and the worker connect.
  await database.sql`alter system set track_commit_timestamp = on`;
  await database.close();
  await stack.restartPostgres(0);
  database = createDatabase(stack.ownerDatabaseUrl, { max: 4 });
  const sql = database.sql;
  const [{ track_commit_timestamp: tracked } = { track_commit_timestamp: 'off' }] = await sql<
    { track_commit_timestamp: string }[]
  >`show track_commit_timestamp`;
  if (tracked !== 'on') throw new Error(`track_commit_timestamp is ${tracked}`);

  // No worker metrics listener: a port of its own would only collide with another stack's.
  const env = productionEnv(stack, { ...mail.env, WORKER_METRICS_PORT: '0' });
  const opsToken = env.OPS_TOKEN!;
  const pspSecret = env.PSP_WEBHOOK_SECRET!;
  const worker = stack.spawn('dist/src/main/worker.js', env, [...heapFlags, ...cpuProfileFlags()]);
  const apiProcess = stack.spawn('dist/src/main/api.js', { ...env, PORT: String(apiPort) }, [
    ...heapFlags,
    ...cpuProfileFlags(),
  ]);
  await waitForReady(`${apiUrl}/readyz`);

  // test/helpers/mailbox.ts reads the codes sent from this Mailpit.
  process.env.MAILPIT_API_URL = mail.apiUrl;

  const partner = await createPartner(database.db, { name: 'Bench' });
  const at = { baseUrl: apiUrl } as TestStack;
  const api = client(at, await tokenFor(at, partner.credentials.production));
  log(`taking ${payers} production loans to active over the API (KYC, credit, signing by e-mail)…`);
  const loanIds = await Promise.all(
    Array.from({ length: payers }, async () => {
      const loan = await activeLoan(at, api, { opsToken, production: true, size: 'largest' });
      return loan.id;
    }),
  );

  // Each committed `loan.payment_received` announces its reference at commit.
  await sql.unsafe(`
    create function bench_payment_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('bench_payment', new.data -> 'payment' ->> 'reference');
      return null;
    end $$;
    create trigger bench_payment_notify after insert on events for each row
      when (new.type = 'loan.payment_received') execute function bench_payment_notify();
  `);
  const waiting = new Map<string, (notifiedAt: number) => void>();
  await sql.listen('bench_payment', (reference) => {
    const notifiedAt = wallNow();
    waiting.get(reference)?.(notifiedAt);
  });
  /** Resolves with the wall time the booking's NOTIFY reached the bench; set up before sending. */
  const booked = (reference: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.delete(reference);
        reject(new Error(`payment ${reference} not booked within ${bookingTimeoutMs} ms`));
      }, bookingTimeoutMs);
      waiting.set(reference, (notifiedAt) => {
        clearTimeout(timer);
        waiting.delete(reference);
        resolve(notifiedAt);
      });
    });

  interface Sample {
    reference: string;
    kind: 'psp' | 'ops';
    counted: boolean;
    sent: number;
    answered: number;
    notified: number;
  }
  const samples: Sample[] = [];

  const payByPix = async (loanId: string, counted: boolean) => {
    const created = await api(`/v3/loans/${loanId}/charges`, {
      method: 'POST',
      body: { scope: 'amount', amount: 100 },
    });
    if (created.status !== 201)
      throw new Error(`charge of ${loanId}: ${created.status} ${await created.text()}`);
    const charge = (await created.json()) as { txid: string };
    const now = new Date();
    const reference = endToEndId(now);
    const body = JSON.stringify({
      pix: [
        { endToEndId: reference, txid: charge.txid, valor: '1.00', horario: now.toISOString() },
      ],
    });
    const signature = signPspBody(pspSecret, body, Math.floor(now.getTime() / 1000));
    const done = booked(reference);
    const sent = wallNow();
    const response = await fetch(`${apiUrl}/psp/v1/pix`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Pix-Signature': signature },
      body,
    });
    const receipt = await response.text();
    const answered = wallNow();
    if (response.status !== 200 || !receipt.includes('"stored":1'))
      throw new Error(`PSP notification: ${response.status} ${receipt}`);
    samples.push({ reference, kind: 'psp', counted, sent, answered, notified: await done });
  };

  let opsCount = 0;
  const desk = await moneyDesk(at, opsToken);
  const payByOps = async (loanId: string, counted: boolean) => {
    const reference = `bench-ops-${++opsCount}`;
    const done = booked(reference);
    const sent = wallNow();
    // A production payment by hand is dual-controlled (issue 37): asked, then approved by the
    // money desk's checker; the approval's execution is the loan's Update.
    const response = await desk(`/loans/${loanId}/payments`, { amount: 100, reference });
    const answer = await response.text();
    const answered = wallNow();
    if (response.status !== 200) throw new Error(`ops payment: ${response.status} ${answer}`);
    samples.push({ reference, kind: 'ops', counted, sent, answered, notified: await done });
  };

  const run = async (rounds: (payer: number) => boolean, counted: boolean) =>
    await Promise.all(
      loanIds.map(async (loanId, payer) => {
        for (let round = 0; rounds(payer); round++) {
          const pspFirst = (round + payer) % 2 === 0;
          if (pspFirst) await payByPix(loanId, counted);
          await payByOps(loanId, counted);
          if (!pspFirst) await payByPix(loanId, counted);
        }
      }),
    );

  log(`warm-up: ${warmupRounds} rounds on each loan…`);
  const warmupDone = Array.from({ length: payers }, () => 0);
  await run((payer) => warmupDone[payer]!++ < warmupRounds, false);
  log(`${notifications} PSP notifications and ${notifications} ops payments, ${payers} loans…`);
  let issued = 0;
  const processes: Record<string, { pid: number | undefined; withChildren?: boolean }> = {
    'Temporal server': { pid: temporalServerPid(stack.temporalAddress) },
    worker: { pid: worker.pid },
    API: { pid: apiProcess.pid },
    PostgreSQL: { pid: await postmasterPid(stack.uploadsDir), withChildren: true },
    bench: { pid: process.pid },
    Mailpit: { pid: mail.process.pid },
  };
  const cpuBefore = await cpuSeconds(processes);
  const began = performance.now();
  await run(() => issued++ < notifications, true);
  const seconds = (performance.now() - began) / 1000;
  const cpuAfter = await cpuSeconds(processes);

  // The rows each payment wrote: the event (its start and commit) and, for a Pix, its storing and
  // its workflow's start.
  const counted = samples.filter((sample) => sample.counted);
  const references = counted.map((sample) => sample.reference);
  interface Row {
    reference: string;
    created: number;
    committed: number | null;
    received: number | null;
    started: number | null;
  }
  const rows = await sql<Row[]>`
    select e.data -> 'payment' ->> 'reference' as reference,
           (extract(epoch from e.created_at) * 1000)::float8 as created,
           (extract(epoch from pg_xact_commit_timestamp(e.xmin)) * 1000)::float8 as committed,
           (extract(epoch from p.received_at) * 1000)::float8 as received,
           (extract(epoch from o.started_at) * 1000)::float8 as started
    from events e
    left join received_pix p on p.end_to_end_id = e.data -> 'payment' ->> 'reference'
    left join workflow_outbox o on o.workflow_id = 'pix/' || p.end_to_end_id
    where e.type = 'loan.payment_received'
      and e.data -> 'payment' ->> 'reference' in ${sql(references)}`;
  const byReference = new Map(rows.map((row) => [row.reference, row]));
  const [{ unmatched } = { unmatched: -1 }] = await sql<{ unmatched: number }[]>`
    select count(*)::int as unmatched from received_pix where status <> 'recorded'`;

  const span = (kind: Sample['kind'], to: (sample: Sample, row: Row) => number) =>
    counted.flatMap((sample) => {
      const row = byReference.get(sample.reference);
      if (sample.kind !== kind || !row) return [];
      return [to(sample, row)];
    });
  const toCommit = (kind: Sample['kind']) =>
    span(kind, (sample, row) => (row.committed ?? NaN) - sample.sent);
  const psp = stats(toCommit('psp'));
  const baseline = stats(toCommit('ops'));
  const missing = counted.filter((sample) => !byReference.get(sample.reference)?.committed).length;

  results.push(
    `PSP notification → loan.payment_received committed: ${psp.n} Pix, ${payers} loans in parallel, ${seconds.toFixed(0)} s (each loan: charge, notify, wait for the booking; alternating with the baseline)`,
    formatStats('PSP: POST /psp/v1/pix → pix workflow → loan Update', psp),
    formatStats('baseline: POST /ops/v1/loans/{id}/payments (Update)', baseline),
    `ratio PSP / baseline:  p50 ${(psp.p50 / baseline.p50).toFixed(2)}   p90 ${(psp.p90 / baseline.p90).toFixed(2)}   p99 ${(psp.p99 / baseline.p99).toFixed(2)}   max ${(psp.max / baseline.max).toFixed(2)}`,
    '',
    'cross-checks (same samples):',
    formatStats(
      '  PSP: sent → event created_at (booking txn start, ms)',
      stats(span('psp', (sample, row) => row.created - sample.sent)),
    ),
    formatStats(
      '  PSP: sent → NOTIFY reached the bench',
      stats(span('psp', (sample) => sample.notified - sample.sent)),
    ),
    formatStats(
      '  baseline: sent → event created_at',
      stats(span('ops', (sample, row) => row.created - sample.sent)),
    ),
    formatStats(
      '  baseline: sent → NOTIFY reached the bench',
      stats(span('ops', (sample) => sample.notified - sample.sent)),
    ),
    formatStats(
      '  baseline: sent → 200 answered (after the commit)',
      stats(span('ops', (sample) => sample.answered - sample.sent)),
    ),
  );

  // Where the time goes: each sampled payment's moments, from the bench (sent, answered), the rows
  // the path wrote (stored, workflow start, booking transaction) and the Temporal histories of the
  // loans' workflow runs and the sampled Pix's workflows (when the server recorded each step).
  log('reading the workflows’ histories…');
  const sampleOf = (kind: Sample['kind']) => {
    const all = counted.filter((sample) => sample.kind === kind);
    const every = Math.max(1, Math.floor(all.length / historySample));
    return all.filter((_, index) => index % every === 0);
  };
  const sampled = [...sampleOf('psp'), ...sampleOf('ops')];
  const moments = new Map<string, Map<string, number>>();
  for (const sample of sampled) {
    const row = byReference.get(sample.reference);
    const set = new Map<string, number>([
      ['sent', sample.sent],
      ['answered', sample.answered],
    ]);
    if (row) {
      if (row.received !== null) set.set('stored', row.received);
      if (row.started !== null) set.set('start answered', row.started);
      set.set('txn began', row.created);
      if (row.committed !== null) set.set('committed', row.committed);
    }
    moments.set(sample.reference, set);
  }
  const temporal = stack.temporal.client;
  for (const loanId of loanIds)
    for await (const { history } of temporal.workflow
      .list({ query: `WorkflowId = "loan/${loanId}"` })
      .intoHistories())
      // Typed `unknown` by the SDK: the History message of `fetchHistory`.
      readHistory(
        (history as { events?: HistoryEventView[] } | undefined)?.events ?? [],
        moments,
        'loan',
      );
  for (const sample of sampled)
    if (sample.kind === 'psp')
      readHistory(
        (await temporal.workflow.getHandle(`pix/${sample.reference}`).fetchHistory()).events ?? [],
        new Map([[sample.reference, moments.get(sample.reference)!]]),
        'pix',
      );
  const timeline = (kind: Sample['kind'], title: string, steps: [string, string][]) => {
    results.push('', title);
    let previous = 'sent';
    for (const [moment, description] of steps) {
      const fromSent: number[] = [];
      const own: number[] = [];
      for (const sample of sampled) {
        const set = moments.get(sample.reference)!;
        const at = set.get(moment);
        if (sample.kind !== kind || at === undefined) continue;
        fromSent.push(at - sample.sent);
        const before = set.get(previous);
        if (before !== undefined) own.push(at - before);
      }
      results.push(
        `  ${description.padEnd(62)} ${ms(median(fromSent))} ${`(+${ms(median(own)).trim()})`.padStart(10)}   n=${fromSent.length}`,
      );
      previous = moment;
    }
  };
  const loanSteps = (activity: string): [string, string][] => [
    ['loan update accepted', 'loan workflow: the Update accepted (its task completed)'],
    ['loan activity scheduled', `  ${activity} scheduled`],
    ['loan activity started', `  ${activity} picked up by the worker`],
    ['txn began', '  booking transaction began (event created_at)'],
    ['committed', '  booking committed (event commit timestamp): the figure above'],
    ['loan activity completed', `  ${activity} completed (server)`],
    ['loan update completed', 'loan workflow: the Update completed (next task)'],
  ];
  timeline(
    'psp',
    'where the PSP’s time goes (median ms from sending; in brackets, the median step from the line above):',
    [
      ['stored', 'Pix stored (received_pix.received_at: that txn’s start)'],
      ['pix started', 'pix/{e2e} workflow started (its history)'],
      ['start answered', 'the API heard the start (outbox started_at)'],
      ['answered', '200 answered to the PSP'],
      ['pix activity scheduled', 'pix workflow: settlePix scheduled (its first task done)'],
      ['pix activity started', 'pix workflow: settlePix picked up by the worker'],
      ...loanSteps('recordPix'),
      ['pix activity completed', 'pix workflow: settlePix completed'],
      ['pix completed', 'pix workflow completed'],
    ],
  );
  timeline('ops', 'where the baseline’s time goes (same form):', [
    ...loanSteps('recordLoanPayment'),
    ['answered', '200 answered to ops'],
  ]);
  const used = (name: string) => (cpuAfter.get(name) ?? 0) - (cpuBefore.get(name) ?? 0);
  const cores = availableParallelism();
  const ours = Object.keys(processes).reduce((sum, name) => sum + used(name), 0);
  results.push(
    '',
    `CPU in the measured ${seconds.toFixed(0)} s (${cores} cores: ${(seconds * cores).toFixed(0)} core-seconds), per process, and % of the machine:`,
    '  ' +
      [...Object.keys(processes), 'rest of the machine']
        .map((name) => {
          const cpu = name === 'rest of the machine' ? used('machine') - ours : used(name);
          return `${name} ${cpu.toFixed(0)} s (${((cpu / seconds / cores) * 100).toFixed(0)} %)`;
        })
        .join(', '),
  );
  results.push(
    '',
    `${(psp.n / seconds).toFixed(1)} Pix/s and as many ops payments; events without a commit time: ${missing}; Pix not recorded: ${unmatched}`,
  );
} finally {
  await database.close();
  await mail.stop();
  await stack.stop();
}
console.log('');
for (const line of results) console.log(line);

interface Payloads {
  payloads?: { data?: Uint8Array | null }[] | null;
}
type Long = { toString(): string } | number | null | undefined;
/** What the breakdown reads of a history event (a structural view of Temporal's protobuf type). */
interface HistoryEventView {
  eventId?: Long;
  eventTime?: { seconds?: Long; nanos?: number | null } | null;
  workflowExecutionStartedEventAttributes?: { input?: Payloads | null } | null;
  workflowExecutionCompletedEventAttributes?: object | null;
  activityTaskScheduledEventAttributes?: { input?: Payloads | null } | null;
  activityTaskStartedEventAttributes?: { scheduledEventId?: Long } | null;
  activityTaskCompletedEventAttributes?: { scheduledEventId?: Long } | null;
  workflowExecutionUpdateAcceptedEventAttributes?: {
    acceptedRequest?: {
      meta?: { updateId?: string | null } | null;
      input?: { args?: Payloads | null } | null;
    } | null;
  } | null;
  workflowExecutionUpdateCompletedEventAttributes?: {
    meta?: { updateId?: string | null } | null;
  } | null;
}

/**
 * Records, for each payment of `moments` a history's events name (by its reference, quoted, in an
 * Update's or an activity's input), when the server wrote its steps: `{prefix} update accepted`,
 * `… activity scheduled/started/completed`, `… update completed`, and for a Pix's own workflow
 * `pix started` and `pix completed`.
 */
function readHistory(
  events: readonly HistoryEventView[],
  moments: Map<string, Map<string, number>>,
  prefix: 'loan' | 'pix',
): void {
  const time = (event: HistoryEventView) =>
    Number(String(event.eventTime?.seconds ?? 0)) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;
  const named = (payloads: Payloads | null | undefined): Map<string, number> | undefined => {
    for (const payload of payloads?.payloads ?? []) {
      const text = Buffer.from(payload.data ?? []).toString('utf8');
      for (const match of text.matchAll(/"([A-Za-z0-9-]+)"/g)) {
        const set = moments.get(match[1]!);
        if (set) return set;
      }
    }
    return undefined;
  };
  const activities = new Map<string, Map<string, number>>();
  const updates = new Map<string, Map<string, number>>();
  for (const event of events) {
    const at = time(event);
    if (prefix === 'pix' && event.workflowExecutionStartedEventAttributes) {
      for (const set of moments.values()) set.set('pix started', at);
    } else if (prefix === 'pix' && event.workflowExecutionCompletedEventAttributes) {
      for (const set of moments.values()) set.set('pix completed', at);
    } else if (event.workflowExecutionUpdateAcceptedEventAttributes) {
      const request = event.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest;
      const set = named(request?.input?.args);
      if (set) {
        set.set(`${prefix} update accepted`, at);
        updates.set(request?.meta?.updateId ?? '', set);
      }
    } else if (event.workflowExecutionUpdateCompletedEventAttributes) {
      const id = event.workflowExecutionUpdateCompletedEventAttributes.meta?.updateId ?? '';
      updates.get(id)?.set(`${prefix} update completed`, at);
    } else if (event.activityTaskScheduledEventAttributes) {
      const set = named(event.activityTaskScheduledEventAttributes.input);
      if (set) {
        set.set(`${prefix} activity scheduled`, at);
        activities.set(String(event.eventId), set);
      }
    } else if (event.activityTaskStartedEventAttributes) {
      const id = String(event.activityTaskStartedEventAttributes.scheduledEventId);
      activities.get(id)?.set(`${prefix} activity started`, at);
    } else if (event.activityTaskCompletedEventAttributes) {
      const id = String(event.activityTaskCompletedEventAttributes.scheduledEventId);
      activities.get(id)?.set(`${prefix} activity completed`, at);
    }
  }
}

/** Fields of /proc/{pid}/stat after the command's name: state, ppid, …, utime (11) … cstime (14). */
async function procStat(pid: number | string): Promise<string[] | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return text?.slice(text.lastIndexOf(')') + 2).split(' ');
}

/**
 * CPU seconds used so far by each process (`withChildren`: and its children, living or exited:
 * PostgreSQL's backends are the postmaster's), and `machine`: every CPU's busy time.
 */
async function cpuSeconds(
  processes: Record<string, { pid: number | undefined; withChildren?: boolean }>,
): Promise<Map<string, number>> {
  const stats = new Map<number, string[]>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = await procStat(entry);
    if (fields) stats.set(Number(entry), fields);
  }
  const ticks = (fields: string[], withReaped: boolean) =>
    Number(fields[11]) +
    Number(fields[12]) +
    (withReaped ? Number(fields[13]) + Number(fields[14]) : 0);
  const result = new Map<string, number>();
  for (const [name, { pid, withChildren = false }] of Object.entries(processes)) {
    if (pid === undefined) continue;
    const own = stats.get(pid);
    let total = own ? ticks(own, withChildren) : 0;
    if (withChildren)
      for (const fields of stats.values())
        if (Number(fields[1]) === pid) total += ticks(fields, false);
    result.set(name, total / clockTicks);
  }
  // The first line of /proc/stat: user nice system idle iowait irq softirq steal, in ticks.
  const all = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.split(/\s+/).slice(1);
  const busy = [0, 1, 2, 5, 6, 7].reduce((sum, field) => sum + Number(all[field] ?? 0), 0);
  result.set('machine', busy / clockTicks);
  return result;
}

/** The Temporal CLI dev server listening on `address` (found by its command line). */
function temporalServerPid(address: string): number | undefined {
  const port = address.split(':').pop()!;
  const found = spawnSync('pgrep', ['-f', `start-dev.*${port}`])
    .stdout?.toString()
    .trim();
  const pid = Number(found?.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The bench's PostgreSQL server: the first line of its data folder's postmaster.pid. */
async function postmasterPid(uploadsDir: string): Promise<number | undefined> {
  // The stack keeps PostgreSQL's data beside the uploads folder, in its scratch folder.
  const text = await readFile(join(dirname(uploadsDir), 'pg', 'postmaster.pid'), 'utf8').catch(
    () => undefined,
  );
  const pid = Number(text?.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
