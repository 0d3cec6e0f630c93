/**
 * `npm run bench:cluster`: the production topology under a mixed load, with processes and
 * PostgreSQL failing in the middle of it, beside the same load on the Temporal CLI's dev server
 * (issue 25).
 *
 * The stack is the one `npm run dev:cluster` starts (src/devstack/cluster.ts), on ports and in a
 * temporary folder of its own: embedded PostgreSQL, Temporal server 1.29.1 on it (`npm run
 * provision -- --cluster` builds it), MinIO, Mailpit, two API processes and two worker processes
 * of the production build (`npm run build` unless BENCH_SKIP_BUILD=1; `NODE_ENV=production`,
 * rate limits lifted, sandbox reviews and disbursements left to the bench). Then the same again
 * with the Temporal CLI dev server (SQLite on disk) in the server's place, everything else the
 * same: two APIs, two workers, the same faults (BENCH_TARGETS=cluster or dev-server runs one).
 *
 * The load, for BENCH_SECONDS (default 120), from clients in this process, each request sent to
 * the two APIs in turn (no proxy; a refused connection is sent to the other API at once):
 *   - readers: `GET /v3/customers/{id}` of customers registered so far;
 *   - registrars: `POST /v3/customers` (a new cpf, an Idempotency-Key);
 *   - simulations: 12 installments on a sandbox offer, 360 on a production customer's offer that
 *     ops approved for 360 installments;
 *   - loans: each client takes a new sandbox customer through KYC (three uploads to MinIO,
 *     biometrics on the hosted page, the sandbox review), waits for its offer, simulates, takes
 *     the loan, signs it (sandbox helper) and has ops confirm the disbursement;
 *   - payers: each active loan is paid R$ 1.00 PAYMENTS_PER_LOAN times by ops, then paid off
 *     (`POST /ops/v1/loans/{id}/payoff`), so some loans end while others repay.
 * A client meeting a 503 waits what Retry-After says (at most 3 s) and sends the same request again
 * (same Idempotency-Key or payment reference), as a partner would.
 *
 * Faults during the load: worker-1 SIGKILLed at 20 % of it and started again, api-2 SIGKILLed at
 * 45 % and started again, PostgreSQL stopped at 70 % for 5 s and started again (in the cluster,
 * the Temporal server's own store goes with it).
 *
 * Then the checks (exit 1 if any fails), after the load has settled:
 *   - every request got an answer, except those in flight on api-2 when it was killed (counted and
 *     shown apart, as are connections refused while it was down: those were never sent); no
 *     timeout;
 *   - every non-2xx answer is a 503 with Retry-After during a fault (up to 15 s after it ended) or
 *     one of the business refusals a retry after a lost answer or a 503 meets (listed); nothing
 *     else. A retry refused 409 `idempotency_key_in_use` after a lost answer is expected (the key
 *     is held by the process that died, for IDEMPOTENCY_LOCK_MS); after a 503 only while the first
 *     try still runs: a key still `running` once nothing runs is a failure, shown with what the
 *     APIs' logs say of it;
 *   - every registration, loan, simulation and payment answered 2xx is in the database exactly
 *     once, and each whose answer was lost at most once; nothing else was written for the partner;
 *     `customer.created` and `loan.payment_received` once each; the ledger's reconciliation
 *     (`reconcileLedger`) finds nothing;
 *   - every workflow is where its record says: onboarding running for every customer, offers
 *     running for every active customer, each loan's running while it is not ended and completed
 *     once it is, the outbox empty, no workflow failed, terminated or timed out; no process died
 *     that the bench did not kill.
 * With BENCH_RETRY_HELD=1 the bench then waits for the held keys' locks to lapse (IDEMPOTENCY_LOCK_MS, 30 s) and
 * sends each held request again with its key, as a partner retrying would, and says whether
 * anything was done twice.
 *
 * It prints, cluster beside dev server: answers per second and p50/p99 per operation, reads'
 * p99 against the 25 ms target (360-installment simulations run all along), workflow executions
 * started per second, each process's peak RSS and CPU, and how busy the machine was otherwise
 * (figures from a shared machine are only as good as its quiet).
 *
 * BENCH_MIX=readers=4,registrars=2,sim12=1,sim360=2,loans=3,payers=2 (the defaults) sizes the
 * clients; BENCH_TARGETS=cluster or dev-server runs one side.
 * Everything listens and connects on 127.0.0.1 only. BENCH_KEEP=1 keeps the temporary folder
 * (logs of every process); it is kept anyway when a check fails.
 */
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { createPartner } from '../src/commands/create-partner.js';
import { createDatabase } from '../src/db/client.js';
import { reconcileLedger } from '../src/db/queries/ledger.js';
import { freshSecrets, startCluster, type RunningCluster } from '../src/devstack/cluster.js';
import { TEMPORAL_CLI_VERSION } from '../src/devstack/temporal-binaries.js';
import { TEMPORAL_SERVER_VERSION } from '../src/devstack/temporal-server.js';
import { projectRoot } from '../src/project-root.js';
import { workflowIds } from '../src/temporal/workflow-ids.js';
import { activeCustomer, activeLoan, offerOf } from '../test/helpers/credit.js';
import { fakeCpf, files, registerCustomer } from '../test/helpers/customers.js';
import { SANDBOX_CODE } from '../test/helpers/hosted.js';
import { client, tokenFor } from '../test/helpers/partners.js';
import type { TestStack } from '../test/helpers/stack.js';
import { benchTemporalClient, buildUnlessSkipped, log } from './support.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 120);
const TARGETS = (process.env.BENCH_TARGETS ?? 'cluster,dev-server').split(',') as Target[];
/** Clients of each kind (BENCH_MIX=readers=4,registrars=2,… changes some). */
const MIX: Record<'readers' | 'registrars' | 'sim12' | 'sim360' | 'loans' | 'payers', number> = {
  readers: 4,
  registrars: 2,
  sim12: 1,
  sim360: 2,
  loans: 3,
  payers: 2,
};
for (const pair of (process.env.BENCH_MIX ?? '').split(',').filter(Boolean)) {
  const [name, value] = pair.split('=');
  if (!name || !(name in MIX) || !Number.isInteger(Number(value)))
    throw new Error(`BENCH_MIX: ${pair}? (e.g. readers=4,loans=3)`);
  MIX[name as keyof typeof MIX] = Number(value);
}
const PAYMENTS_PER_LOAN = 15; // past PAYMENTS_PER_RUN (12): each loan continues as new once
const PREPARED_LOANS = 4;
const READ_SEEDS = 20;
const REQUEST_TIMEOUT_MS = 30_000; // past the API's own budget (REQUEST_TIMEOUT, 15 s)
const FAULT_MARGIN_MS = 15_000; // a 503 this long after a fault ended still counts as the fault's
const READ_TARGET_P99_MS = 25;
const PORTS = {
  postgres: 5491,
  temporal: 7291,
  minio: 9191,
  apis: [3991, 3992],
  workerMetrics: [0, 0],
};

type Target = 'cluster' | 'dev-server';

const OPS = {
  read: 'GET /v3/customers/{id}',
  register: 'POST /v3/customers',
  sim12: 'POST …/simulations (12 installments)',
  sim360: 'POST …/simulations (360 installments)',
  upload: 'POST …/documents (KYC, to MinIO)',
  biometrics: 'POST …/biometrics',
  hosted: 'hosted biometrics page (code, capture)',
  review: 'POST /v3/sandbox/customers/{id}/review',
  offers: 'GET …/credit-offers (until one)',
  sim3: 'POST …/simulations (3, the loan’s)',
  loan: 'POST /v3/loans',
  sign: 'POST /v3/sandbox/loans/{id}/signatures',
  disburse: 'POST /ops/v1/loans/{id}/disbursement',
  payment: 'POST /ops/v1/loans/{id}/payments',
  payoff: 'POST /ops/v1/loans/{id}/payoff',
  loanRead: 'GET /v3/loans/{id} (after a lost answer)',
} as const;
type Op = (typeof OPS)[keyof typeof OPS];
const FLOW = 'a loan, registration → active (whole flow)';

// ---------------------------------------------------------------------------------------------
// Requests and what became of them

interface Attempt {
  op: Op;
  api: number;
  /** ms since the load began */
  at: number;
  ms: number;
  status: number | undefined;
  problem: string | undefined;
  retryAfter: boolean;
  /** `answer`; `refused`: no connection (never sent); `lost`: the socket closed; `timeout`. */
  kind: 'answer' | 'refused' | 'lost' | 'timeout';
  error: string | undefined;
  /** What the bench made of a non-2xx answer (`held`: a key held after a 503, see the checks). */
  verdict: 'ok' | 'retried' | 'expected' | 'unexpected' | 'held';
  note: string | undefined;
  /** The Idempotency-Key, on a 409 `idempotency_key_in_use` after a 503. */
  key?: string | undefined;
  /** The API's X-Request-Id of a non-2xx answer (its log lines carry it). */
  requestId?: string | undefined;
}

interface Outcome {
  status: number | undefined;
  body: unknown;
  /** `ok` (2xx); `refused` (a non-2xx kept); `unresolved` (no final answer: lost, key held). */
  result: 'ok' | 'refused' | 'unresolved';
  lost: boolean;
  had503: boolean;
}

interface Request {
  op: Op;
  method: string;
  path: string;
  token: string;
  json?: unknown;
  form?: () => FormData;
  urlencoded?: Record<string, string>;
  key?: string;
  /** Send again after a lost answer (safe: a read, a key, a reference, or naturally idempotent). */
  retryLost?: boolean;
  /** A business refusal this request may meet after a lost answer or a 503 (problem codes). */
  afterRetry?: string[];
  /** A refusal expected at any time (problem codes). */
  expected?: string[];
}

class Load {
  readonly attempts: Attempt[] = [];
  /** Requests refused as in use after a 503, by key (the checks look at them again). */
  readonly held = new Map<string, Request>();
  readonly started = Date.now();
  private turn = 0;
  /** An API that refused a connection is left alone for a second (then tried again). */
  private readonly downUntil: number[] = [];

  /** The next API in turn, skipping one that refused a connection within the last second. */
  private pick(): number {
    for (let tries = 0; tries < this.urls.length; tries++) {
      const api = this.turn++ % this.urls.length;
      if ((this.downUntil[api] ?? 0) <= Date.now()) return api;
    }
    return this.turn++ % this.urls.length;
  }
  stopAt = Infinity;

  constructor(private readonly urls: string[]) {}

  now(): number {
    return Date.now() - this.started;
  }

  get running(): boolean {
    return this.now() < this.stopAt;
  }

  async send(request: Request): Promise<Outcome> {
    let api = this.pick();
    let lost = false;
    let had503 = false;
    let refusedInARow = 0;
    let heldSince: number | undefined;
    const first = Date.now();
    for (;;) {
      const attempt = await this.once(request, api);
      this.attempts.push(attempt);
      const other = () => (api = (api + 1) % this.urls.length);
      if (attempt.kind === 'refused') {
        this.downUntil[api] = Date.now() + 1_000;
        // Nothing reached a server: the other API takes it (both down: wait a little).
        if (++refusedInARow % this.urls.length === 0) await pause(250);
        other();
        if (Date.now() - first > 120_000)
          return { status: undefined, body: undefined, result: 'unresolved', lost, had503 };
        continue;
      }
      refusedInARow = 0;
      if (attempt.kind === 'lost' || attempt.kind === 'timeout') {
        lost = true;
        if (!request.retryLost)
          return { status: undefined, body: undefined, result: 'unresolved', lost, had503 };
        other();
        await pause(100);
        continue;
      }
      const status = attempt.status!;
      const body = attempt.body;
      delete attempt.body;
      if (status >= 200 && status < 300) return { status, body, result: 'ok', lost, had503 };
      if (status === 503) {
        had503 = true;
        attempt.verdict = 'retried';
        if (Date.now() - first > 120_000)
          return { status, body, result: 'unresolved', lost, had503 };
        await pause(Math.min(3_000, 1_000 * Math.max(0.2, Number(attempt.retryAfterValue) || 1)));
        other();
        continue;
      }
      if (status === 409 && attempt.problem === 'idempotency_key_in_use' && (lost || had503)) {
        // After a lost answer the key is held by the process that died, until its lock lapses
        // (IDEMPOTENCY_LOCK_MS, 30 s), as designed. After a 503 the key is held until the first
        // try's outcome is stored (once the database is back): the checks look at the key
        // afterwards (`held`: judged there).
        attempt.verdict = lost ? 'expected' : 'held';
        attempt.note = lost ? 'key held by the killed process' : 'key still held after a 503';
        attempt.key = request.key;
        if (!lost && request.key) this.held.set(request.key, request);
        heldSince ??= Date.now();
        if (lost || Date.now() - heldSince > 30_000)
          return { status, body, result: 'unresolved', lost, had503 };
        await pause(1_000);
        continue;
      }
      if ((lost || had503) && request.afterRetry?.includes(attempt.problem ?? '')) {
        attempt.verdict = 'expected';
        attempt.note = `after a ${lost ? 'lost answer' : '503'}`;
        return { status, body, result: 'refused', lost, had503 };
      }
      if (request.expected?.includes(attempt.problem ?? '')) {
        attempt.verdict = 'expected';
        return { status, body, result: 'refused', lost, had503 };
      }
      attempt.verdict = 'unexpected';
      return { status, body, result: 'refused', lost, had503 };
    }
  }

  private async once(
    request: Request,
    api: number,
  ): Promise<Attempt & { body?: unknown; retryAfterValue?: string | null }> {
    const at = this.now();
    const began = performance.now();
    const headers: Record<string, string> = { authorization: `Bearer ${request.token}` };
    let body: string | FormData | undefined;
    if (request.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    } else if (request.form) body = request.form();
    else if (request.urlencoded) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(request.urlencoded).toString();
    }
    if (request.key) headers['idempotency-key'] = request.key;
    const base = {
      op: request.op,
      api,
      at,
      problem: undefined,
      retryAfter: false,
      error: undefined,
      verdict: 'ok' as Attempt['verdict'],
      note: undefined,
    };
    try {
      const response = await fetch(`${this.urls[api]}${request.path}`, {
        method: request.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      const ms = performance.now() - began;
      let parsed: unknown = text;
      if (response.headers.get('content-type')?.includes('json')) {
        try {
          parsed = JSON.parse(text);
        } catch {
          // left as text
        }
      }
      const problem =
        response.status >= 400 && typeof parsed === 'object' && parsed !== null
          ? ((parsed as { code?: string }).code ?? undefined)
          : undefined;
      return {
        ...base,
        ms,
        status: response.status,
        problem,
        retryAfter: response.headers.has('retry-after'),
        retryAfterValue: response.headers.get('retry-after'),
        requestId:
          response.status >= 300 ? (response.headers.get('x-request-id') ?? undefined) : undefined,
        kind: 'answer',
        body: parsed,
      };
    } catch (error) {
      const ms = performance.now() - began;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const name = (error as { name?: string }).name;
      const kind: Attempt['kind'] =
        name === 'TimeoutError' ? 'timeout' : cause?.code === 'ECONNREFUSED' ? 'refused' : 'lost';
      return {
        ...base,
        ms,
        status: undefined,
        kind,
        error: `${cause?.code ?? name ?? 'error'}: ${cause?.message ?? (error as Error).message}`,
      };
    }
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// What each run keeps for the checks

interface Ledger {
  /** cpf → the registration's fate */
  registrations: Map<string, { result: Outcome['result']; id?: string; lost: boolean }>;
  /** offer → simulations answered 201 (ids), and tries left unresolved */
  simulations: Map<string, { ok: string[]; unresolved: number }>;
  /** offer → the loan's fate */
  loans: Map<string, { result: Outcome['result']; id?: string; lastStatus?: string }>;
  /** loan id → reference → fate */
  payments: Map<string, Map<string, { result: Outcome['result']; kind: 'payment' | 'payoff' }>>;
  /** customers whose sandbox review made them active during the load */
  activated: Set<string>;
  flows: { began: number; ms: number | undefined; ended: string }[];
}

interface Fault {
  what: string;
  at: number;
  /** when the thing was back (ready again) */
  backAt: number;
  process?: string;
}

// ---------------------------------------------------------------------------------------------
// One run: start the stack, prepare, load with faults, check

interface RunResult {
  target: Target;
  label: string;
  attempts: Attempt[];
  flows: Ledger['flows'];
  faults: Fault[];
  usage: Usage;
  starts: { total: number; byType: Map<string, number> };
  checks: { name: string; ok: boolean; detail: string[] }[];
  scratch: string;
}

async function run(target: Target): Promise<RunResult> {
  const scratch = await mkdtemp(join(tmpdir(), `bench-cluster-${target}-`));
  const say = (line: string) => log(`${target}: ${line}`);
  const unexpectedExits: string[] = [];
  let load: Load | undefined;
  const cluster: RunningCluster = await startCluster({
    dataDir: join(scratch, 'data'),
    ports: PORTS,
    secrets: freshSecrets(),
    temporal: target === 'cluster' ? 'server' : 'dev-server',
    logDir: join(scratch, 'logs'),
    env: {
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '1000000',
      // The bench reviews and disburses itself.
      SANDBOX_REVIEW_DELAY: '1h',
      SANDBOX_DISBURSEMENT_DELAY: '60d',
    },
    onUnexpectedExit: (process, code, signal) => {
      const line = `${process.name} exited by itself (${signal ?? `code ${code}`}) at ${load ? `${(load.now() / 1000).toFixed(1)} s` : 'start'}`;
      unexpectedExits.push(line);
      say(line);
    },
    progress: say,
  });
  const label =
    target === 'cluster'
      ? `cluster: Temporal server ${TEMPORAL_SERVER_VERSION} on PostgreSQL`
      : `dev server: Temporal CLI ${TEMPORAL_CLI_VERSION} (SQLite)`;
  const opsToken = cluster.env.OPS_TOKEN!;
  const urls = cluster.apis.map((api) => api.url!);
  const database = createDatabase(cluster.postgres.url, { max: 4 });
  const temporal = await benchTemporalClient(
    cluster.temporal.address,
    cluster.env.TEMPORAL_PAYLOAD_KEYS,
    cluster.temporal.namespace,
  );
  const { connection } = temporal;
  try {
    // --- Preparation (not measured) --------------------------------------------------------
    // Production customers prove themselves by codes e-mailed to them (test/helpers/mailbox.ts).
    process.env.MAILPIT_API_URL = cluster.mailpit.apiUrl;
    const partner = await createPartner(database.db, { name: `Bench cluster (${target})` });
    const at = (index: number) => ({ baseUrl: urls[index % urls.length]! }) as TestStack;
    const sandboxToken = await tokenFor(at(0), partner.credentials.sandbox);
    const productionToken = await tokenFor(at(1), partner.credentials.production);
    const sandbox = client(at(0), sandboxToken);
    const ledger: Ledger = {
      registrations: new Map(),
      simulations: new Map(),
      loans: new Map(),
      payments: new Map(),
      activated: new Set(),
      flows: [],
    };
    say(
      `preparing: ${READ_SEEDS} customers to read, an offer for each simulation, ${PREPARED_LOANS} active loans…`,
    );
    const readable: string[] = [];
    for (let i = 0; i < READ_SEEDS; i++) {
      const customer = await registerCustomer(client(at(i), sandboxToken));
      readable.push(customer.id);
      ledger.registrations.set(customer.cpf, { result: 'ok', id: customer.id, lost: false });
    }
    const shortCustomer = await activeCustomer(at(0), sandbox, {}, { sandbox: true });
    ledger.registrations.set(shortCustomer.cpf, {
      result: 'ok',
      id: shortCustomer.id,
      lost: false,
    });
    ledger.activated.add(shortCustomer.id);
    const shortOffer = await offerOf(sandbox, shortCustomer.id);
    const production = client(at(1), productionToken);
    const longCustomer = await activeCustomer(at(1), production, {}, undefined, opsToken, 360);
    ledger.activated.add(longCustomer.id);
    const longOffer = await offerOf(production, longCustomer.id);
    if (longOffer.max_installments !== 360)
      throw new Error(
        `the production offer allows ${longOffer.max_installments} installments, not 360`,
      );
    const payable: string[] = [];
    await Promise.all(
      Array.from({ length: PREPARED_LOANS }, async (_, index) => {
        const loan = await activeLoan(at(index), client(at(index), sandboxToken), {
          opsToken,
          codes: { sandbox: true },
        });
        payable.push(loan.id);
        ledger.loans.set(loan.credit_offer_id, { result: 'ok', id: loan.id, lastStatus: 'active' });
      }),
    );
    // Customers, offers and loans made by the helpers: their registrations count as sent.
    for (const row of await database.sql<{ id: string; cpf: string }[]>`
      select id, cpf from customers where partner_id = ${partner.partner_id}`)
      if (![...ledger.registrations.values()].some((r) => r.id === row.id))
        ledger.registrations.set(row.cpf, { result: 'ok', id: row.id, lost: false });
    for (const row of await database.sql<{ customer_id: string }[]>`
      select distinct customer_id from loans where partner_id = ${partner.partner_id}`)
      ledger.activated.add(row.customer_id);
    for (const [offerId] of [[shortOffer.id], [longOffer.id]] as const) {
      const [{ n } = { n: 0 }] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from simulations where credit_offer_id = ${offerId}`;
      ledger.simulations.set(offerId, {
        ok: Array.from({ length: n }, () => 'prepared'),
        unresolved: 0,
      });
    }

    // --- The load, with the faults -----------------------------------------------------------
    load = new Load(urls);
    const active = load;
    const faults: Fault[] = [];
    const usage = sampleUsage(cluster, target);
    say(
      `load for ${SECONDS} s: ${Object.entries(MIX)
        .map(([name, n]) => `${n} ${name}`)
        .join(
          ', ',
        )}; faults at ${Math.round(SECONDS * 0.2)} s (worker-1), ${Math.round(SECONDS * 0.45)} s (api-2), ${Math.round(SECONDS * 0.7)} s (PostgreSQL)…`,
    );
    active.stopAt = SECONDS * 1000;
    const clients = [
      ...times(MIX.readers, () => readers(active, sandboxToken, readable)),
      ...times(MIX.registrars, () => registrars(active, sandboxToken, readable, ledger)),
      ...times(MIX.sim12, () =>
        simulators(active, sandboxToken, shortOffer.id, OPS.sim12, 12, ledger),
      ),
      ...times(MIX.sim360, () =>
        simulators(active, productionToken, longOffer.id, OPS.sim360, 360, ledger),
      ),
      ...times(MIX.loans, () =>
        loanFlows(active, sandboxToken, opsToken, readable, payable, ledger),
      ),
      ...times(MIX.payers, (index) =>
        payers(active, opsToken, payable, ledger, `${target}-${index}`),
      ),
    ];
    const faulting = (async () => {
      const until = async (ms: number) => pause(Math.max(0, ms - active.now()));
      const worker = cluster.workers[0]!;
      await until(SECONDS * 200);
      say(`SIGKILL ${worker.name} (pid ${worker.pid})`);
      const workerAt = active.now();
      await worker.kill('SIGKILL');
      await pause(2_000);
      worker.start();
      faults.push({
        what: `${worker.name} SIGKILLed, started again`,
        at: workerAt,
        backAt: active.now(),
        process: worker.name,
      });
      say(`${worker.name} started again (pid ${worker.pid})`);

      const api = cluster.apis[1]!;
      await until(SECONDS * 450);
      say(`SIGKILL ${api.name} (pid ${api.pid})`);
      const apiAt = active.now();
      await api.kill('SIGKILL');
      await pause(2_000);
      api.start();
      await api.ready(60_000);
      faults.push({
        what: `${api.name} SIGKILLed, started again`,
        at: apiAt,
        backAt: active.now(),
        process: api.name,
      });
      say(`${api.name} ready again (pid ${api.pid})`);

      await until(SECONDS * 700);
      say('restarting PostgreSQL (5 s down)');
      const postgresAt = active.now();
      await cluster.postgres.restart(5_000);
      faults.push({
        what: 'PostgreSQL stopped for 5 s, started again',
        at: postgresAt,
        backAt: active.now(),
      });
      say('PostgreSQL back');
    })();
    await Promise.all([faulting, ...clients]);
    const loadEnded = active.now();
    say(
      `load done (${(loadEnded / 1000).toFixed(1)} s with the last requests in flight); settling…`,
    );
    const used = await usage.stop();

    // --- Checks ------------------------------------------------------------------------------
    const checks = await check({
      target,
      cluster,
      database,
      temporal,
      partnerId: partner.partner_id,
      ledger,
      load: active,
      faults,
      unexpectedExits,
      logDir: join(scratch, 'logs'),
    });
    const starts = await workflowStarts(temporal, active.started, SECONDS * 1000);
    return {
      target,
      label,
      attempts: active.attempts,
      flows: ledger.flows,
      faults,
      usage: used,
      starts,
      checks,
      scratch,
    };
  } finally {
    await connection.close();
    await database.close();
    await cluster.stop();
  }
}

const times = <T>(n: number, make: (index: number) => T): T[] =>
  Array.from({ length: n }, (_, index) => make(index));

// ---------------------------------------------------------------------------------------------
// The clients

async function readers(load: Load, token: string, readable: string[]): Promise<void> {
  while (load.running) {
    const id = readable[Math.floor(Math.random() * readable.length)]!;
    await load.send({
      op: OPS.read,
      method: 'GET',
      path: `/v3/customers/${id}`,
      token,
      retryLost: true,
    });
  }
}

const registration = () => ({
  cpf: fakeCpf({ notStartingWith9: true }),
  name: 'Maria Silva',
  email: `maria.${randomUUID().slice(0, 8)}@example.com`,
  phone: '+5511987654321',
});

/** POST /v3/customers with a key; the fate goes into the ledger. */
async function register(
  load: Load,
  token: string,
  ledger: Ledger,
): Promise<{ id: string; cpf: string; email: string } | undefined> {
  const body = registration();
  const outcome = await load.send({
    op: OPS.register,
    method: 'POST',
    path: '/v3/customers',
    token,
    json: body,
    key: `reg-${randomUUID()}`,
    retryLost: true,
    afterRetry: ['customer_already_exists'],
  });
  const id = outcome.result === 'ok' ? (outcome.body as { id: string }).id : undefined;
  ledger.registrations.set(body.cpf, {
    result: outcome.result,
    ...(id ? { id } : {}),
    lost: outcome.lost || outcome.had503,
  });
  return id ? { id, cpf: body.cpf, email: body.email } : undefined;
}

async function registrars(
  load: Load,
  token: string,
  readable: string[],
  ledger: Ledger,
): Promise<void> {
  while (load.running) {
    const customer = await register(load, token, ledger);
    if (customer) readable.push(customer.id);
  }
}

async function simulators(
  load: Load,
  token: string,
  offerId: string,
  op: Op,
  installments: number,
  ledger: Ledger,
): Promise<void> {
  const record = ledger.simulations.get(offerId)!;
  while (load.running) {
    const outcome = await load.send({
      op,
      method: 'POST',
      path: `/v3/credit-offers/${offerId}/simulations`,
      token,
      json: { amount: 500_000, installments },
      key: `sim-${randomUUID()}`,
      retryLost: true,
    });
    if (outcome.result === 'ok') record.ok.push((outcome.body as { id: string }).id);
    else if (outcome.result === 'unresolved') record.unresolved++;
  }
}

/** A new sandbox customer taken to an active loan, step by step; a step left unresolved ends it. */
async function loanFlows(
  load: Load,
  token: string,
  opsToken: string,
  readable: string[],
  payable: string[],
  ledger: Ledger,
): Promise<void> {
  while (load.running) {
    const began = load.now();
    const ended = await oneLoan(load, token, opsToken, readable, payable, ledger);
    ledger.flows.push({ began, ms: ended === 'active' ? load.now() - began : undefined, ended });
  }
}

async function oneLoan(
  load: Load,
  token: string,
  opsToken: string,
  readable: string[],
  payable: string[],
  ledger: Ledger,
): Promise<string> {
  const customer = await register(load, token, ledger);
  if (!customer) return 'registration';
  readable.push(customer.id);
  const step = (request: Omit<Request, 'token'> & { token?: string }) =>
    load.send({ token, retryLost: true, afterRetry: ['invalid_state'], ...request });
  for (const type of ['identity_card_front', 'identity_card_back', 'selfie']) {
    if (!load.running) return 'stopped';
    const uploaded = await step({
      op: OPS.upload,
      method: 'POST',
      path: `/v3/customers/${customer.id}/documents`,
      form: () => {
        const form = new FormData();
        form.set('type', type);
        form.set('file', new Blob([files.pdf()], { type: 'application/pdf' }), `${type}.pdf`);
        return form;
      },
      key: `doc-${randomUUID()}`,
    });
    if (uploaded.result !== 'ok') return 'documents';
  }
  if (!load.running) return 'stopped';
  const session = await step({
    op: OPS.biometrics,
    method: 'POST',
    path: `/v3/customers/${customer.id}/biometrics`,
    key: `bio-${randomUUID()}`,
  });
  if (session.result !== 'ok') return 'biometrics';
  const page = new URL((session.body as { session_url: string }).session_url).pathname;
  const code = await step({
    op: OPS.hosted,
    method: 'POST',
    path: `${page}/code`,
    retryLost: false,
  });
  if (code.result !== 'ok') return 'hosted code';
  const codeId = /name="code_id" value="([^"]+)"/.exec(String(code.body))?.[1];
  if (!codeId) return 'hosted code form';
  const captured = await step({
    op: OPS.hosted,
    method: 'POST',
    path: page,
    urlencoded: { code_id: codeId, code: SANDBOX_CODE },
    retryLost: false,
  });
  if (captured.result !== 'ok') return 'hosted capture';
  if (!load.running) return 'stopped';
  const reviewed = await step({
    op: OPS.review,
    method: 'POST',
    path: `/v3/sandbox/customers/${customer.id}/review`,
    json: {
      items: ['identity_card_front', 'identity_card_back', 'selfie', 'biometrics'].map((type) => ({
        type,
        decision: 'approve',
      })),
    },
    key: `rev-${randomUUID()}`,
  });
  if (reviewed.result !== 'ok') return 'review';
  ledger.activated.add(customer.id);
  // The offer comes from the customer's offers workflow.
  let offer: { id: string; min_amount: number } | undefined;
  const deadline = Date.now() + 60_000;
  while (!offer && Date.now() < deadline) {
    const page = await step({
      op: OPS.offers,
      method: 'GET',
      path: `/v3/customers/${customer.id}/credit-offers?status=available`,
    });
    if (page.result !== 'ok') return 'offers';
    offer = (page.body as { data: { id: string; min_amount: number }[] }).data[0];
    if (!offer) await pause(250);
  }
  if (!offer) return 'no offer within 60 s';
  if (!load.running) return 'stopped';
  ledger.simulations.set(offer.id, { ok: [], unresolved: 0 });
  const simulated = await step({
    op: OPS.sim3,
    method: 'POST',
    path: `/v3/credit-offers/${offer.id}/simulations`,
    json: { amount: offer.min_amount, installments: 3 },
    key: `sim-${randomUUID()}`,
  });
  const simulations = ledger.simulations.get(offer.id)!;
  if (simulated.result === 'unresolved') simulations.unresolved++;
  if (simulated.result !== 'ok') return 'simulation';
  const simulationId = (simulated.body as { id: string }).id;
  simulations.ok.push(simulationId);
  const created = await step({
    op: OPS.loan,
    method: 'POST',
    path: '/v3/loans',
    json: {
      credit_offer_id: offer.id,
      simulation_id: simulationId,
      disbursement_account: { type: 'pix', pix_key: customer.email },
    },
    key: `loan-${randomUUID()}`,
    afterRetry: ['credit_offer_unavailable'],
  });
  if (created.result !== 'ok') {
    ledger.loans.set(offer.id, { result: created.result });
    return 'loan';
  }
  const loan = created.body as { id: string; signers: { cpf: string }[]; status: string };
  const fate = { result: 'ok' as const, id: loan.id, lastStatus: loan.status };
  ledger.loans.set(offer.id, fate);
  if (!load.running) return 'stopped';
  const signed = await step({
    op: OPS.sign,
    method: 'POST',
    path: `/v3/sandbox/loans/${loan.id}/signatures`,
    json: { cpf: loan.signers[0]!.cpf },
  });
  if (signed.result === 'ok') fate.lastStatus = (signed.body as { status: string }).status;
  else if (signed.result !== 'refused' || (await loanStatus(load, token, loan.id)) !== 'processing')
    return 'signature';
  else fate.lastStatus = 'processing';
  if (!load.running) return 'stopped';
  const disbursed = await step({
    op: OPS.disburse,
    method: 'POST',
    path: `/ops/v1/loans/${loan.id}/disbursement`,
    token: opsToken,
    json: { outcome: 'confirmed' },
  });
  if (disbursed.result === 'ok') fate.lastStatus = (disbursed.body as { status: string }).status;
  else if (disbursed.result !== 'refused' || (await loanStatus(load, token, loan.id)) !== 'active')
    return 'disbursement';
  else fate.lastStatus = 'active';
  if (fate.lastStatus !== 'active') return `loan ${fate.lastStatus}`;
  payable.push(loan.id);
  return 'active';
}

async function loanStatus(load: Load, token: string, loanId: string): Promise<string | undefined> {
  const read = await load.send({
    op: OPS.loanRead,
    method: 'GET',
    path: `/v3/loans/${loanId}`,
    token,
    retryLost: true,
  });
  return read.result === 'ok' ? (read.body as { status: string }).status : undefined;
}

/** Each payer takes an active loan, pays it PAYMENTS_PER_LOAN times, pays it off, and goes on. */
async function payers(
  load: Load,
  opsToken: string,
  payable: string[],
  ledger: Ledger,
  name: string,
): Promise<void> {
  let n = 0;
  while (load.running) {
    const loanId = payable.shift();
    if (!loanId) {
      await pause(200);
      continue;
    }
    const references = new Map<string, { result: Outcome['result']; kind: 'payment' | 'payoff' }>();
    ledger.payments.set(loanId, references);
    for (let i = 0; i <= PAYMENTS_PER_LOAN && load.running; i++) {
      const kind = i === PAYMENTS_PER_LOAN ? 'payoff' : 'payment';
      const reference = `bench-${name}-${++n}`;
      const outcome = await load.send({
        op: kind === 'payoff' ? OPS.payoff : OPS.payment,
        method: 'POST',
        path: `/ops/v1/loans/${loanId}/${kind === 'payoff' ? 'payoff' : 'payments'}`,
        token: opsToken,
        json: kind === 'payoff' ? { reference } : { amount: 100, reference },
        // The reference names the payment for good: sending it again is safe.
        retryLost: true,
      });
      references.set(reference, { result: outcome.result, kind });
      const fate = [...ledger.loans.values()].find((loan) => loan.id === loanId);
      // A payment without a 2xx tells nothing of the loan's state (a payoff retried while its
      // first try still ran is refused 409 invalid_state once the first has finished the loan).
      if (fate)
        fate.lastStatus =
          outcome.result === 'ok' ? (outcome.body as { status: string }).status : undefined;
      if (outcome.result !== 'ok') break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Peak RSS and CPU per process

/** Units of /proc's CPU times. */
const clockTicks = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

interface Usage {
  /** name → peak resident set in MB (VmHWM; PostgreSQL: the largest sum of its processes' PSS) */
  rss: Map<string, number>;
  /** name → cores used on average over the load */
  cores: Map<string, number>;
  /** cores the whole machine used on average, and how many it has */
  machine: { busy: number; count: number };
}

/**
 * Every 500 ms: each process's peak resident set and its CPU time so far (an API or worker killed
 * and started again: both lives; PostgreSQL: the postmaster and every child).
 */
function sampleUsage(cluster: RunningCluster, target: Target) {
  const peaks = new Map<string, number>();
  /** name → pid → CPU ticks first and last seen */
  const ticks = new Map<string, Map<number, { first: number; last: number }>>();
  const keep = (name: string, mb: number | undefined) => {
    if (mb !== undefined) peaks.set(name, Math.max(peaks.get(name) ?? 0, mb));
  };
  const temporalName = target === 'cluster' ? 'Temporal server' : 'Temporal dev server';
  let temporalPid: number | undefined = cluster.temporal.process?.pid;
  const began = { machine: machineTicks(), at: Date.now() };
  const sample = async () => {
    const table = await processTable();
    const count = (name: string, pid: number | undefined) => {
      const stat = pid === undefined ? undefined : table.get(pid);
      if (pid === undefined || !stat) return;
      const byPid = ticks.get(name) ?? new Map<number, { first: number; last: number }>();
      ticks.set(name, byPid);
      const seen = byPid.get(pid) ?? { first: stat.ticks, last: stat.ticks };
      seen.last = stat.ticks;
      byPid.set(pid, seen);
    };
    for (const child of [...cluster.apis, ...cluster.workers]) {
      if (!child.pid) continue;
      keep(child.name, await statusMb(child.pid, 'VmHWM'));
      count(child.name, child.pid);
    }
    temporalPid ??= await findPid(
      (cmdline) => cmdline.includes('start-dev') && cmdline.includes(String(PORTS.temporal)),
    );
    if (temporalPid) {
      keep(temporalName, await statusMb(temporalPid, 'VmHWM'));
      count(temporalName, temporalPid);
    }
    for (const [name, pid] of [
      ['MinIO', cluster.minio.process.pid],
      ['Mailpit', cluster.mailpit.process.pid],
      ['load generator (this process)', process.pid],
    ] as const) {
      if (pid === undefined) continue;
      keep(name, await statusMb(pid, 'VmHWM'));
      count(name, pid);
    }
    const postmaster = await cluster.postgres.pid();
    if (postmaster) {
      const name = 'PostgreSQL (all its processes, PSS)';
      let kb = 0;
      for (const [pid, stat] of table) {
        if (pid !== postmaster && stat.ppid !== postmaster) continue;
        const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
        kb += Number(/^Pss:\s+(\d+) kB$/m.exec(rollup)?.[1] ?? 0);
        count(name, pid);
      }
      keep(name, kb / 1024);
    }
  };
  let pending = sample().catch(() => {});
  const timer = setInterval(() => {
    pending = pending.then(sample).catch(() => {});
  }, 500);
  return {
    async stop(): Promise<Usage> {
      clearInterval(timer);
      await pending;
      await sample().catch(() => {});
      const seconds = (Date.now() - began.at) / 1000;
      const cores = new Map<string, number>();
      for (const [name, byPid] of ticks) {
        let used = 0;
        for (const { first, last } of byPid.values()) used += last - first;
        cores.set(name, used / clockTicks / seconds);
      }
      const machine = machineTicks();
      return {
        rss: peaks,
        cores,
        machine: {
          busy: (machine.busy - began.machine.busy) / clockTicks / seconds,
          count: machine.count,
        },
      };
    },
  };
}

/** Busy CPU ticks of the whole machine since boot (/proc/stat), and its CPU count. */
function machineTicks(): { busy: number; count: number } {
  const stat = readFileSync('/proc/stat', 'utf8');
  const fields = stat.split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return {
    busy: user + nice + system + irq + softirq + steal,
    count: stat.split('\n').filter((line) => /^cpu\d+ /.test(line)).length,
  };
}

/** pid → parent pid and CPU ticks used (user + system), of every process (/proc/<pid>/stat). */
async function processTable(): Promise<Map<number, { ppid: number; ticks: number }>> {
  const table = new Map<number, { ppid: number; ticks: number }>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    table.set(Number(entry), {
      ppid: Number(fields[1]),
      ticks: Number(fields[11]) + Number(fields[12]),
    });
  }
  return table;
}

async function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb) / 1024;
}

async function findPid(match: (cmdline: string) => boolean): Promise<number | undefined> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (match(cmdline.replaceAll('\0', ' '))) return Number(entry);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Workflow starts

async function workflowStarts(
  temporal: Client,
  began: number,
  windowMs: number,
): Promise<RunResult['starts']> {
  const from = new Date(began).toISOString();
  const to = new Date(began + windowMs).toISOString();
  const within = `StartTime >= "${from}" AND StartTime < "${to}"`;
  const byType = new Map<string, number>();
  for (const type of [
    'customerOnboardingWorkflow',
    'creditOffersWorkflow',
    'loanWorkflow',
    'webhookDeliveryWorkflow',
  ]) {
    const { count } = await temporal.workflow.count(`WorkflowType = "${type}" AND ${within}`);
    if (count > 0) byType.set(type, count);
  }
  const { count: total } = await temporal.workflow.count(within);
  return { total, byType };
}

// ---------------------------------------------------------------------------------------------
// The checks

interface CheckInput {
  target: Target;
  cluster: RunningCluster;
  database: ReturnType<typeof createDatabase>;
  temporal: Client;
  partnerId: string;
  ledger: Ledger;
  load: Load;
  faults: Fault[];
  unexpectedExits: string[];
  logDir: string;
}

async function check(input: CheckInput): Promise<RunResult['checks']> {
  const { database, temporal, partnerId, ledger, load, faults } = input;
  const sql = database.sql;
  const checks: RunResult['checks'] = [];
  const add = (name: string, ok: boolean, detail: string[] = []) =>
    checks.push({ name, ok, detail });

  // 1. Every request answered; the answers lost are those in flight on the API killed.
  const apiKill = faults.find((fault) => fault.process?.startsWith('api'));
  const killedApi = apiKill ? Number(apiKill.process!.split('-')[1]) - 1 : -1;
  const inFlightOnKill = (a: Attempt) =>
    apiKill !== undefined &&
    a.api === killedApi &&
    a.at <= apiKill.at + 1_000 &&
    a.at + a.ms >= apiKill.at;
  const lost = load.attempts.filter((a) => a.kind === 'lost' || a.kind === 'timeout');
  const explained = lost.filter((a) => a.kind === 'lost' && inFlightOnKill(a));
  const unexplained = lost.filter((a) => !explained.includes(a));
  const refusedConnections = load.attempts.filter((a) => a.kind === 'refused');
  add('every request got an answer', unexplained.length === 0, [
    `${load.attempts.length} requests sent; ${load.attempts.length - lost.length - refusedConnections.length} answered`,
    `${explained.length} in flight on ${apiKill?.process ?? 'the killed API'} when it was SIGKILLed: the socket closed without an answer (a client sees a reset; each was sent again, see below)`,
    `${refusedConnections.length} connections refused while ${apiKill?.process ?? 'an API'} was down (nothing sent; each re-sent at once to the other API)`,
    `timeouts (${REQUEST_TIMEOUT_MS / 1000} s): ${lost.filter((a) => a.kind === 'timeout').length}; other lost answers: ${unexplained.length}`,
    ...unexplained.slice(0, 10).map((a) => `  ${describe(a)}`),
  ]);

  // 1b. A key refused as in use after its request answered 503: the first try still running past its
  // budget (then it completes) or a key the 503 left held (then it stays `running` with nothing
  // running, until its lock lapses). The APIs' logs say why it was left held.
  const heldKeys = [...load.held.keys()];
  const keyRows = await sql<
    { key: string; state: string; created_ms: number; locked_ms: number }[]
  >`
    select key, state, (extract(epoch from created_at) * 1000)::float8 as created_ms,
           (extract(epoch from locked_until) * 1000)::float8 as locked_ms
    from idempotency_keys
    where key in (select jsonb_array_elements_text(${JSON.stringify(heldKeys)}::jsonb))`;
  const stranded = new Map(
    keyRows.filter((row) => row.state === 'running').map((row) => [row.key, row]),
  );
  for (const a of load.attempts.filter((a) => a.verdict === 'held')) {
    a.verdict = stranded.has(a.key!) ? 'unexpected' : 'expected';
    a.note = stranded.has(a.key!)
      ? 'key left held after its request answered 503'
      : 'first try still running after its 503';
  }
  const logs = await apiLogLines(input.logDir);
  type LogLine = {
    requestId?: string;
    err?: { message?: string; cause?: { message?: string; code?: string } };
  };
  const parsed = logs.map((text) => ({ text, line: JSON.parse(text) as LogLine }));
  const causeOf = (line: LogLine) => {
    const cause = line.err?.cause;
    return cause?.message
      ? ` (PostgreSQL: ${cause.code ? `${cause.code} ` : ''}${cause.message})`
      : '';
  };
  const why = (key: string): string => {
    // The holder's own failure (marking the key done, or releasing it), else any line naming it.
    const lines = parsed.filter(
      ({ text }) => text.includes(key) && text.includes('idempotency_keys'),
    );
    const holder =
      lines.find(({ text }) =>
        /update \\"idempotency_keys\\" set \\"state\\"|delete from \\"idempotency_keys\\"/.test(
          text,
        ),
      ) ?? lines[0];
    if (!holder) return 'no log line names the key';
    const message = holder.line.err?.message ?? '';
    if (message.includes('update "idempotency_keys" set "state"')) {
      const status = /params: completed,(\d+)/.exec(message)?.[1];
      const location = /"Location":"([^"]+)"/.exec(message)?.[1];
      return `its work was done (${status}${location ? `, ${location}` : ''}) but marking the key completed failed${causeOf(holder.line)}: answered 503`;
    }
    if (message.includes('delete from "idempotency_keys"'))
      return `its work failed, then releasing the key failed too${causeOf(holder.line)}: answered 503`;
    return message.slice(0, 160);
  };
  /** Why the API answered a request as it did, from its log line (requests carry their id). */
  const logged = (a: Attempt): string => {
    if (!a.requestId) return '';
    const found = parsed.find(({ line }) => line.requestId === a.requestId && line.err);
    if (!found) return '';
    return ` — ${(found.line.err?.message ?? '').split('\n')[0]!.slice(0, 80)}${causeOf(found.line)}`;
  };
  const faultOf = (ms: number) =>
    faults.filter((f) => ms >= f.at - 5_000 && ms <= f.backAt).sort((x, y) => y.at - x.at)[0]
      ?.what ?? 'no fault then';
  add(
    'a key whose request answered 503 is free again (retries are not refused as in use)',
    stranded.size === 0,
    [
      `${heldKeys.length} keys were refused as in use after a 503; ${stranded.size} of them are still \`running\` with nothing running, so a retry is refused 409 until the lock lapses (IDEMPOTENCY_LOCK_MS, 30 s):`,
      ...[...stranded.values()].slice(0, 10).map((row) => {
        const claimed = row.created_ms - load.started;
        return `  ${row.key} (${load.held.get(row.key)?.op}), claimed at ${(claimed / 1000).toFixed(1)} s (${faultOf(claimed)}), locked until ${((row.locked_ms - load.started) / 1000).toFixed(1)} s: ${why(row.key)}`;
      }),
    ],
  );

  // 2. Every refusal is a 503 with Retry-After during a fault, or an expected business refusal.
  const inFault = (a: Attempt) =>
    faults.some((fault) => a.at + a.ms >= fault.at && a.at <= fault.backAt + FAULT_MARGIN_MS);
  const answers = load.attempts.filter((a) => a.kind === 'answer');
  const refusals = answers.filter((a) => a.status! >= 300);
  const unavailable = refusals.filter((a) => a.status === 503);
  const noRetryAfter = unavailable.filter((a) => !a.retryAfter);
  const outsideFaults = unavailable.filter((a) => !inFault(a));
  const unexpected = refusals.filter((a) => a.status !== 503 && a.verdict !== 'expected');
  const expected = refusals.filter((a) => a.status !== 503 && a.verdict === 'expected');
  const byFault = faults.map(
    (fault) =>
      `  ${fault.what} (${(fault.at / 1000).toFixed(1)}–${(fault.backAt / 1000).toFixed(1)} s): ${
        unavailable.filter((a) => a.at + a.ms >= fault.at && a.at <= fault.backAt + FAULT_MARGIN_MS)
          .length
      } × 503`,
  );
  add(
    'every refusal: 503 with Retry-After during a fault, or an expected business refusal',
    noRetryAfter.length === 0 && outsideFaults.length === 0 && unexpected.length === 0,
    [
      `${unavailable.length} × 503 (${noRetryAfter.length} without Retry-After, ${outsideFaults.length} outside the faults' windows)`,
      ...byFault,
      ...outsideFaults.slice(0, 10).map((a) => `  outside: ${describe(a)}${logged(a)}`),
      `${expected.length} expected business refusals: ${summarize(expected)}`,
      `${unexpected.length} other non-2xx answers${unexpected.length ? `: ${summarize(unexpected)}` : ''}`,
      ...unexpected.slice(0, 10).map((a) => `  ${describe(a)}`),
    ],
  );

  // Let the outbox start what PostgreSQL's restart held back, then read the records.
  const settleUntil = Date.now() + 90_000;
  for (;;) {
    const [{ n } = { n: 0 }] = await sql<{ n: number }[]>`
      select count(*)::int as n from workflow_outbox where started_at is null`;
    if (n === 0 || Date.now() > settleUntil) {
      add(
        'the outbox started every workflow',
        n === 0,
        n ? [`${n} rows not started after 90 s`] : [],
      );
      break;
    }
    await pause(1_000);
  }

  // 3. Customers: each accepted once; each whose answer was lost at most once; nothing else.
  const customerRows = await sql<{ id: string; cpf: string; status: string }[]>`
    select id, cpf, status from customers where partner_id = ${partnerId}`;
  const rowsByCpf = groupBy(customerRows, (row) => row.cpf);
  const problems: string[] = [];
  let accepted = 0;
  let unresolved = 0;
  let unresolvedCommitted = 0;
  for (const [cpf, fate] of ledger.registrations) {
    const rows = rowsByCpf.get(cpf) ?? [];
    if (fate.result === 'ok') {
      accepted++;
      if (rows.length !== 1 || rows[0]!.id !== fate.id)
        problems.push(
          `registration ${cpf} answered ${fate.id}: ${rows.length} rows (${rows.map((r) => r.id).join(', ')})`,
        );
    } else {
      unresolved++;
      if (rows.length > 1)
        problems.push(`registration ${cpf} (no final answer): ${rows.length} rows`);
      unresolvedCommitted += rows.length;
    }
  }
  const unknownCustomers = customerRows.filter((row) => !ledger.registrations.has(row.cpf));
  for (const row of unknownCustomers)
    problems.push(`customer ${row.id}: no registration sent its cpf`);
  const createdEvents = await sql<{ id: string; n: number }[]>`
    select data->>'id' as id, count(*)::int as n from events
    where partner_id = ${partnerId} and type = 'customer.created' group by 1`;
  const eventCount = new Map(createdEvents.map((row) => [row.id, row.n]));
  const notOnce = customerRows.filter((row) => eventCount.get(row.id) !== 1);
  for (const row of notOnce.slice(0, 10))
    problems.push(`customer ${row.id}: customer.created ${eventCount.get(row.id) ?? 0} times`);
  add('customers: each accepted registration exactly once', problems.length === 0, [
    `${customerRows.length} customers; ${accepted} registrations answered 2xx, each its one row and one customer.created`,
    `${unresolved} registrations without a final answer (lost, or their key held): ${unresolvedCommitted} of them committed, once each`,
    ...problems.slice(0, 10),
  ]);

  // 4. Simulations: as many rows on each offer as were answered 201 (plus at most the unresolved).
  const simulationProblems: string[] = [];
  let simulationsOk = 0;
  for (const [offerId, fate] of ledger.simulations) {
    const [{ n } = { n: 0 }] = await sql<{ n: number }[]>`
      select count(*)::int as n from simulations where credit_offer_id = ${offerId}`;
    simulationsOk += fate.ok.length;
    if (n < fate.ok.length || n > fate.ok.length + fate.unresolved)
      simulationProblems.push(
        `offer ${offerId}: ${n} simulations stored, ${fate.ok.length} answered 201, ${fate.unresolved} unresolved`,
      );
  }
  add('simulations: each accepted exactly once', simulationProblems.length === 0, [
    `${simulationsOk} simulations answered 201 over ${ledger.simulations.size} offers`,
    ...simulationProblems.slice(0, 10),
  ]);

  // 5. Loans: one per offer at most; each accepted present; its status where the answers left it.
  const loanRows = await sql<{ id: string; credit_offer_id: string; status: string }[]>`
    select id, credit_offer_id, status from loans where partner_id = ${partnerId}`;
  const loanProblems: string[] = [];
  const loansByOffer = groupBy(loanRows, (row) => row.credit_offer_id);
  const loanStatuses = new Map<string, number>();
  for (const row of loanRows) loanStatuses.set(row.status, (loanStatuses.get(row.status) ?? 0) + 1);
  for (const [offerId, rows] of loansByOffer) {
    const fate = ledger.loans.get(offerId);
    if (rows.length > 1) loanProblems.push(`offer ${offerId}: ${rows.length} loans`);
    if (!fate) loanProblems.push(`loan ${rows[0]!.id}: no request for its offer ${offerId}`);
  }
  let loansOk = 0;
  let loansUnresolved = 0;
  for (const [offerId, fate] of ledger.loans) {
    const rows = loansByOffer.get(offerId) ?? [];
    if (fate.result === 'ok') {
      loansOk++;
      if (rows.length !== 1 || rows[0]!.id !== fate.id)
        loanProblems.push(`loan ${fate.id} (answered 201): ${rows.length} rows`);
      else if (fate.lastStatus && fate.lastStatus !== rows[0]!.status)
        loanProblems.push(
          `loan ${fate.id}: last answered ${fate.lastStatus}, stored ${rows[0]!.status}`,
        );
    } else if (fate.result === 'unresolved') loansUnresolved++;
  }
  add(
    'loans: each accepted exactly once, in the state its last answer gave',
    loanProblems.length === 0,
    [
      `${loanRows.length} loans (${[...loanStatuses].map(([s, n]) => `${n} ${s}`).join(', ')}); ${loansOk} answered 201; ${loansUnresolved} without a final answer`,
      ...loanProblems.slice(0, 10),
    ],
  );

  // 6. Payments: each accepted reference exactly once; nothing else; one event each.
  const transactions = await sql<{ loan_id: string; reference: string; type: string }[]>`
    select t.loan_id, t.reference, t.type from loan_transactions t join loans l on l.id = t.loan_id
    where l.partner_id = ${partnerId} and t.reference is not null`;
  const paymentEvents = await sql<{ loan_id: string; reference: string; n: number }[]>`
    select data->>'id' as loan_id, data->'payment'->>'reference' as reference, count(*)::int as n
    from events where partner_id = ${partnerId} and type = 'loan.payment_received' group by 1, 2`;
  const eventsByPayment = new Map(
    paymentEvents.map((row) => [`${row.loan_id} ${row.reference}`, row.n]),
  );
  const stored = groupBy(transactions, (row) => `${row.loan_id} ${row.reference}`);
  const paymentProblems: string[] = [];
  let paymentsOk = 0;
  let paymentsUnresolved = 0;
  const sent = new Set<string>();
  for (const [loanId, references] of ledger.payments)
    for (const [reference, fate] of references) {
      const key = `${loanId} ${reference}`;
      sent.add(key);
      const rows = stored.get(key) ?? [];
      if (fate.result === 'ok') {
        paymentsOk++;
        if (rows.length !== 1)
          paymentProblems.push(
            `payment ${reference} on ${loanId} (answered 200): ${rows.length} rows`,
          );
      } else {
        paymentsUnresolved++;
        if (rows.length > 1)
          paymentProblems.push(
            `payment ${reference} on ${loanId} (no final answer): ${rows.length} rows`,
          );
      }
    }
  for (const key of stored.keys())
    if (!sent.has(key)) paymentProblems.push(`transaction ${key}: no request sent that reference`);
  for (const key of stored.keys())
    if (eventsByPayment.get(key) !== 1)
      paymentProblems.push(
        `payment ${key}: loan.payment_received ${eventsByPayment.get(key) ?? 0} times`,
      );
  const findings = await reconcileLedger(database.db);
  for (const finding of findings.slice(0, 10))
    paymentProblems.push(`ledger: ${finding.check} ${finding.subject ?? ''} ${finding.message}`);
  add(
    'payments: each accepted exactly once; the ledger reconciles',
    paymentProblems.length === 0 && findings.length === 0,
    [
      `${transactions.length} payment transactions stored; ${paymentsOk} payments answered 200; ${paymentsUnresolved} without a final answer`,
      `reconcileLedger: ${findings.length === 0 ? '[] (every check holds)' : `${findings.length} findings`}`,
      ...paymentProblems.slice(0, 10),
    ],
  );

  // 7. Workflows: where their records say. Starts held back by a fault have a minute to happen.
  const expectations: { id: string; want: 'RUNNING' | 'COMPLETED'; what: string }[] = [
    ...customerRows.map((row) => ({
      id: workflowIds.customerOnboarding(row.id),
      want: row.status === 'denied' ? ('COMPLETED' as const) : ('RUNNING' as const),
      what: `customer ${row.status}`,
    })),
    ...customerRows
      .filter((row) => row.status === 'active')
      .map((row) => ({
        id: workflowIds.creditOffers(row.id),
        want: 'RUNNING' as const,
        what: 'offers of an active customer',
      })),
    ...loanRows.map((row) => ({
      id: workflowIds.loan(row.id),
      want: ['finished', 'cancelled', 'error'].includes(row.status)
        ? ('COMPLETED' as const)
        : ('RUNNING' as const),
      what: `loan ${row.status}`,
    })),
  ];
  let pending = expectations;
  const wrong = new Map<string, string>();
  const workflowDeadline = Date.now() + 60_000;
  while (pending.length > 0) {
    wrong.clear();
    const next: typeof pending = [];
    await forEach(pending, 8, async (expectation) => {
      try {
        const { status } = await temporal.workflow.getHandle(expectation.id).describe();
        if (status.name !== expectation.want) {
          next.push(expectation);
          wrong.set(expectation.id, `${expectation.what}: ${status.name}, not ${expectation.want}`);
        }
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        next.push(expectation);
        wrong.set(expectation.id, `${expectation.what}: no workflow`);
      }
    });
    pending = next;
    if (pending.length === 0 || Date.now() > workflowDeadline) break;
    await pause(2_000);
  }
  const { count: broken } = await temporal.workflow.count(
    'ExecutionStatus = "Failed" OR ExecutionStatus = "Terminated" OR ExecutionStatus = "TimedOut"',
  );
  const running = expectations.filter((e) => e.want === 'RUNNING').length;
  add('workflows: each running or ended as its record says', pending.length === 0 && broken === 0, [
    `${expectations.length} described: ${running} expected running (onboarding, offers, loans not ended), ${expectations.length - running} completed (loans ended)`,
    `failed, terminated or timed out in the namespace: ${broken}`,
    ...[...wrong].slice(0, 10).map(([id, what]) => `  ${id}: ${what}`),
  ]);

  // 8. No process died that the bench did not kill.
  const temporalProcess = input.cluster.temporal.process;
  const temporalGone =
    temporalProcess && (temporalProcess.exitCode !== null || temporalProcess.signalCode !== null);
  add('no process died by itself', input.unexpectedExits.length === 0 && !temporalGone, [
    ...input.unexpectedExits,
    ...(temporalGone ? ['the Temporal server exited'] : []),
  ]);
  // 9. (BENCH_RETRY_HELD=1) What a partner's retry meets once the held keys' locks lapse.
  if (process.env.BENCH_RETRY_HELD === '1' && stranded.size > 0)
    add(
      ...(await retryWhenLocksLapse(
        input,
        [...stranded.values()].map((row) => ({ ...row, first: why(row.key) })),
      )),
    );

  return checks;
}

/** Every line the APIs logged (each process's file, across restarts). */
async function apiLogLines(logDir: string): Promise<string[]> {
  const lines: string[] = [];
  for (const file of await readdir(logDir).catch(() => [] as string[]))
    if (file.startsWith('api-'))
      lines.push(
        ...(await readFile(join(logDir, file), 'utf8'))
          .split('\n')
          .filter((l) => l.startsWith('{')),
      );
  return lines;
}

/**
 * Waits until the held keys' locks have lapsed, sends each held request again with its key (what
 * a partner retrying past the lock would end up doing), and counts what it wrote.
 */
async function retryWhenLocksLapse(
  input: CheckInput,
  held: { key: string; locked_ms: number; first: string }[],
): Promise<[string, boolean, string[]]> {
  const { load, database, ledger } = input;
  const wait = Math.max(...held.map((row) => row.locked_ms)) + 2_000 - Date.now();
  log(
    `waiting ${(wait / 1000).toFixed(0)} s for the held keys' locks to lapse, then sending each again…`,
  );
  await pause(Math.max(0, wait));
  const retry = new Load(input.cluster.apis.map((api) => api.url!));
  retry.stopAt = Infinity;
  const lines: string[] = [];
  let twice = 0;
  for (const { key, first } of held) {
    const request = load.held.get(key)!;
    const outcome = await retry.send(request);
    const answer = retry.attempts.at(-1)!;
    const created = (outcome.body as { id?: string } | undefined)?.id;
    let effect = '';
    if (request.op === OPS.register) {
      const cpf = (request.json as { cpf: string }).cpf;
      const [{ n } = { n: 0 }] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from customers where cpf = ${cpf} and partner_id = ${input.partnerId}`;
      effect = `; customers with its cpf now: ${n}`;
      if (n > 1) twice++;
    } else if (/\/simulations$/.test(request.path)) {
      const offerId = request.path.split('/')[3]!;
      const fate = ledger.simulations.get(offerId);
      if (outcome.result === 'ok' && created && fate) {
        fate.ok.push(created);
        fate.unresolved--;
      }
    }
    const done = first.startsWith('its work was done');
    if (done && outcome.result === 'ok' && request.op !== OPS.register) twice++;
    lines.push(
      `  ${key} (${request.op}): first try: ${first}; again: ${answer.status ?? answer.error}${answer.problem ? ` ${answer.problem}` : ''}${created ? ` (${created})` : ''}${effect}${done && outcome.result === 'ok' ? ': DONE TWICE under one key' : ''}`,
    );
  }
  return [
    'held keys, sent again once their locks lapsed: nothing done twice',
    twice === 0,
    [`${held.length} requests sent again`, ...lines],
  ];
}

function describe(a: Attempt): string {
  const what = a.kind === 'answer' ? `${a.status}${a.problem ? ` ${a.problem}` : ''}` : a.error;
  return `${(a.at / 1000).toFixed(1)} s api-${a.api + 1} ${a.op}: ${what}${a.note ? ` (${a.note})` : ''} after ${a.ms.toFixed(0)} ms`;
}

function summarize(attempts: Attempt[]): string {
  const counts = new Map<string, number>();
  for (const a of attempts) {
    const key = `${a.status} ${a.problem ?? ''} on ${a.op}${a.note ? ` (${a.note})` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]) => `${n} × ${key}`).join('; ') || 'none';
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    groups.set(k, [...(groups.get(k) ?? []), row]);
  }
  return groups;
}

async function forEach<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// The report

interface Row {
  perSecond: number;
  p50: number | undefined;
  p99: number | undefined;
  other: string;
}

function quantile(sorted: number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}

function rowOf(result: RunResult, op: Op): Row {
  const mine = result.attempts.filter((a) => a.op === op && a.at < SECONDS * 1000);
  const ok = mine.filter((a) => a.kind === 'answer' && a.status! < 300).map((a) => a.ms);
  ok.sort((a, b) => a - b);
  const other = new Map<string, number>();
  for (const a of mine) {
    if (a.kind === 'answer' && a.status! < 300) continue;
    const key = a.kind === 'answer' ? String(a.status) : a.kind;
    other.set(key, (other.get(key) ?? 0) + 1);
  }
  return {
    perSecond: ok.length / SECONDS,
    p50: quantile(ok, 0.5),
    p99: quantile(ok, 0.99),
    other: [...other].map(([key, n]) => `${n}×${key}`).join(' '),
  };
}

function flowRow(result: RunResult): Row {
  const done = result.flows.filter((f) => f.ms !== undefined && f.began < SECONDS * 1000);
  const ms = done.map((f) => f.ms!).sort((a, b) => a - b);
  const ended = new Map<string, number>();
  for (const flow of result.flows)
    if (flow.ms === undefined && flow.ended !== 'stopped')
      ended.set(flow.ended, (ended.get(flow.ended) ?? 0) + 1);
  return {
    perSecond: done.length / SECONDS,
    p50: quantile(ms, 0.5),
    p99: quantile(ms, 0.99),
    other: [...ended].map(([step, n]) => `${n} ended at ${step}`).join(', '),
  };
}

const fmt = (ms: number | undefined) =>
  ms === undefined
    ? '—'
    : ms >= 1000
      ? `${(ms / 1000).toFixed(1)} s`
      : `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;

function report(results: RunResult[]): void {
  const header = (title: string) => console.log(`\n${title}`);
  const git = (...args: string[]) =>
    spawnSync('git', args, { cwd: projectRoot, encoding: 'utf8' }).stdout?.trim() ?? '';
  const dirty = git('status', '--porcelain', '--', 'src', 'activities', 'workflows')
    .split('\n')
    .filter(Boolean).length;
  header(
    `The build under test: commit ${git('rev-parse', '--short', 'HEAD')}${dirty ? ` with ${dirty} uncommitted files under src/, activities/, workflows/` : ''}.`,
  );
  const cell = (row: Row) =>
    `${row.perSecond.toFixed(1).padStart(7)}/s ${fmt(row.p50).padStart(8)} ${fmt(row.p99).padStart(8)}`;
  const width = 44;
  header(
    `Both stacks: two APIs and two workers of the production build, embedded PostgreSQL, MinIO, Mailpit; only Temporal differs.\nMixed load for ${SECONDS} s through both APIs (${Object.entries(
      MIX,
    )
      .map(([name, n]) => `${n} ${name}`)
      .join(', ')}), with the faults below; 2xx answers per second, their p50 and p99:`,
  );
  console.log(`${''.padEnd(width)} ${results.map((r) => r.label.padEnd(36)).join('  ')}`);
  console.log(
    `${'operation'.padEnd(width)} ${results.map(() => `${'ok'.padStart(9)} ${'p50'.padStart(8)} ${'p99'.padStart(8)}         `).join('  ')}`,
  );
  for (const op of Object.values(OPS)) {
    const rows = results.map((r) => rowOf(r, op));
    console.log(`${op.padEnd(width)} ${rows.map((row) => `${cell(row)}         `).join('  ')}`);
  }
  const flows = results.map(flowRow);
  console.log(`${FLOW.padEnd(width)} ${flows.map((row) => `${cell(row)}         `).join('  ')}`);
  header(
    'Other answers per operation (status × count; lost = socket closed, refused = no connection):',
  );
  for (const result of results) {
    const lines = Object.values(OPS)
      .map((op) => [op, rowOf(result, op).other] as const)
      .filter(([, other]) => other);
    console.log(`  ${result.label}:${lines.length ? '' : ' none'}`);
    for (const [op, other] of lines) console.log(`    ${op.padEnd(width)} ${other}`);
    const flowsEnded = flowRow(result).other;
    if (flowsEnded) console.log(`    ${'loan flows given up'.padEnd(width)} ${flowsEnded}`);
  }

  header(
    `Reads (GET /v3/customers/{id}) p99 beside 360-installment simulations (target ≤ ${READ_TARGET_P99_MS} ms):`,
  );
  for (const result of results) {
    const reads = result.attempts.filter(
      (a) => a.op === OPS.read && a.kind === 'answer' && a.status! < 300 && a.at < SECONDS * 1000,
    );
    const calm = reads.filter(
      (a) => !result.faults.some((f) => a.at + a.ms >= f.at && a.at <= f.backAt + FAULT_MARGIN_MS),
    );
    const p99 = (list: Attempt[]) =>
      quantile(
        list.map((a) => a.ms).sort((a, b) => a - b),
        0.99,
      );
    const all = p99(reads);
    const quiet = p99(calm);
    const verdict = (v: number | undefined) =>
      v === undefined ? '' : v <= READ_TARGET_P99_MS ? 'met' : 'MISSED';
    console.log(
      `  ${result.label.padEnd(48)} whole run ${fmt(all).padStart(8)} (${verdict(all)}); outside the faults' windows ${fmt(quiet).padStart(8)} (${verdict(quiet)}, ${calm.length} reads)`,
    );
  }

  header('Workflow executions started during the load (continue-as-new runs included):');
  for (const result of results) {
    const byType = [...result.starts.byType].map(([type, n]) => `${type} ${n}`).join(', ');
    console.log(
      `  ${result.label.padEnd(48)} ${result.starts.total} = ${(result.starts.total / SECONDS).toFixed(1)}/s   (${byType})`,
    );
  }

  header(
    'Peak RSS per process (VmHWM; an API or worker killed and started again: the larger of its two lives), and CPU cores used on average during the load:',
  );
  const names = [...new Set(results.flatMap((r) => [...r.usage.rss.keys()]))];
  console.log(
    `  ${''.padEnd(40)} ${results.map((r) => `${r.target.padStart(14)} RSS   CPU`).join('   ')}`,
  );
  for (const name of names)
    console.log(
      `  ${name.padEnd(40)} ${results
        .map((r) => {
          const mb = r.usage.rss.get(name);
          const cores = r.usage.cores.get(name);
          return `${(mb === undefined ? '—' : `${mb.toFixed(0)} MB`).padStart(18)} ${(cores === undefined ? '—' : cores.toFixed(2)).padStart(5)}`;
        })
        .join('   ')}`,
    );
  for (const result of results) {
    const ours = [...result.usage.cores.values()].reduce((sum, cores) => sum + cores, 0);
    const { busy, count } = result.usage.machine;
    console.log(
      `  ${result.target}: the machine's ${count} cores were ${((busy / count) * 100).toFixed(0)} % busy (${busy.toFixed(2)} cores); the processes above used ${ours.toFixed(2)}, everything else on the machine ${Math.max(0, busy - ours).toFixed(2)}`,
    );
  }

  header('Faults:');
  for (const result of results)
    for (const fault of result.faults)
      console.log(
        `  ${result.target.padEnd(12)} at ${(fault.at / 1000).toFixed(1).padStart(5)} s: ${fault.what}; back at ${(fault.backAt / 1000).toFixed(1)} s`,
      );

  for (const result of results) {
    header(`Checks, ${result.label}:`);
    for (const check of result.checks) {
      console.log(`  ${check.ok ? 'ok    ' : 'FAILED'} ${check.name}`);
      for (const line of check.detail) console.log(`         ${line}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------

buildUnlessSkipped();
const results: RunResult[] = [];
let failed = false;
for (const target of TARGETS) {
  const result = await run(target);
  results.push(result);
  if (result.checks.some((c) => !c.ok)) failed = true;
}
report(results);
for (const result of results) {
  const keep = process.env.BENCH_KEEP === '1' || result.checks.some((c) => !c.ok);
  if (keep) console.log(`\n${result.target}: logs and data kept in ${result.scratch}`);
  else await rm(result.scratch, { recursive: true, force: true });
}
console.log(failed ? '\nFAILED: see the checks above' : '\nevery check holds');
process.exitCode = failed ? 1 : 0;
