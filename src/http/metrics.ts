import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { environments } from '../domain/environments.js';
import { startOfBusinessDate } from '../domain/business-date.js';
import {
  discrepancyKinds,
  reconciliationStatuses,
  type ReconciliationStatus,
} from '../domain/reconciliation/report.js';

export interface HttpMetrics {
  readonly registry: Registry;
  observe(method: string, route: string, status: number, seconds: number): void;
}

/** One registry per app instance, so tests can build several apps without clashing names. */
export function createHttpMetrics(options: { processMetrics: boolean }): HttpMetrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency in seconds, by method, route template and status.',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return {
    registry,
    observe(method, route, status, seconds) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
  };
}

/** A read of PostgreSQL at scrape time gives up after this (Prometheus' own timeout is 10 s). */
export const SCRAPE_READ_TIMEOUT_MS = 2_000;

/**
 * A gauge's read of PostgreSQL at scrape time: its value, or undefined when the database does not
 * answer within `SCRAPE_READ_TIMEOUT_MS`. The scrape still answers — the process's own figures and
 * `database_up 0` — rather than failing the whole target, and no rule fires on a value nobody
 * read: a labelled gauge has no sample (its series go stale), an unlabelled one is NaN (which
 * no comparison of a rule holds for).
 */
async function scrapeRead<T>(read: () => Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), SCRAPE_READ_TIMEOUT_MS);
  });
  try {
    return await Promise.race([read(), timedOut]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `database_up`: 1 when PostgreSQL answered a `select 1` at this scrape, 0 when it did not
 * (refused, or no answer within 2 s): the `DatabaseUnreachable` alert, while the rest of
 * `/metrics` still answers.
 */
export function registerDatabaseUp(metrics: HttpMetrics, ping: () => Promise<unknown>): void {
  if (metrics.registry.getSingleMetric('database_up')) return;
  new Gauge({
    name: 'database_up',
    help: 'Whether PostgreSQL answered this scrape (1) or not (0).',
    registers: [metrics.registry],
    async collect() {
      this.set((await scrapeRead(async () => (await ping(), true))) ? 1 : 0);
    },
  });
}

/**
 * `ledger_imbalance_centavos{environment}`: debits − credits over the whole ledger, read when
 * `/metrics` is scraped. Always 0; anything else is an alert (the database refuses an unbalanced
 * transaction, so it would mean entries written around the one writer).
 */
export function registerLedgerGauge(
  metrics: HttpMetrics,
  read: () => Promise<Record<string, number>>,
): void {
  if (metrics.registry.getSingleMetric('ledger_imbalance_centavos')) return;
  new Gauge({
    name: 'ledger_imbalance_centavos',
    help: 'Debits minus credits over every ledger entry, by environment (always 0).',
    labelNames: ['environment'] as const,
    registers: [metrics.registry],
    async collect() {
      const imbalances = await scrapeRead(read);
      this.reset();
      for (const [environment, imbalance] of Object.entries(imbalances ?? {}))
        this.set({ environment }, imbalance);
    },
  });
}

/**
 * `unmatched_pix`: Pix received whose txid named no charge (contract §14), read when `/metrics` is
 * scraped. Money on the lender's account that no loan has booked: above 0, ops look at
 * `GET /ops/v1/unmatched-pix`.
 */
export function registerUnmatchedPixGauge(metrics: HttpMetrics, read: () => Promise<number>): void {
  if (metrics.registry.getSingleMetric('unmatched_pix')) return;
  new Gauge({
    name: 'unmatched_pix',
    help: 'Pix received that match no charge, waiting for ops.',
    registers: [metrics.registry],
    async collect() {
      this.set((await scrapeRead(read)) ?? Number.NaN);
    },
  });
}

/**
 * `ops_break_glass_uses_total`: requests the break-glass token (`OPS_TOKEN`) authenticated. It
 * starts the first administrators and is kept in a vault after: any increase is an alert
 * (`increase(ops_break_glass_uses_total[5m]) > 0`, README "Watch"); the audit trail says what
 * each use did.
 */
export function breakGlassCounter(metrics: HttpMetrics): Counter {
  const existing = metrics.registry.getSingleMetric('ops_break_glass_uses_total');
  if (existing instanceof Counter) return existing;
  return new Counter({
    name: 'ops_break_glass_uses_total',
    help: 'Requests authenticated with the break-glass OPS_TOKEN (each audited; any increase is an alert).',
    registers: [metrics.registry],
  });
}

/**
 * `workflow_outbox_oldest_pending_seconds`: how long the oldest record whose workflow has not
 * started has waited, read when `/metrics` is scraped. Starts happen right after the commit and the
 * worker's sweeper retries the rest (backing off to 5 minutes): minutes here mean Temporal is
 * unreachable or a start keeps failing (the row's `last_error` says why).
 */
export function registerOutboxGauge(metrics: HttpMetrics, read: () => Promise<number>): void {
  if (metrics.registry.getSingleMetric('workflow_outbox_oldest_pending_seconds')) return;
  new Gauge({
    name: 'workflow_outbox_oldest_pending_seconds',
    help: 'Seconds the oldest record waiting for its workflow to start has waited (0: none waits).',
    registers: [metrics.registry],
    async collect() {
      this.set((await scrapeRead(read)) ?? Number.NaN);
    },
  });
}

/** Why an endpoint is disabled: by its partner, or by the service (410, or five failed events). */
export const disabledReasons = ['manual', 'gone', 'failing'] as const;

/**
 * `webhook_endpoints_disabled{environment,reason}`: disabled endpoints of every partner, read when
 * `/metrics` is scraped. Every pair is exported, 0 included, so a first disabling shows as a rise
 * (the alert takes `delta`).
 */
export function registerDisabledEndpointsGauge(
  metrics: HttpMetrics,
  read: () => Promise<{ environment: string; reason: string; count: number }[]>,
): void {
  if (metrics.registry.getSingleMetric('webhook_endpoints_disabled')) return;
  new Gauge({
    name: 'webhook_endpoints_disabled',
    help: 'Disabled webhook endpoints, by environment and reason (manual: by the partner; gone, failing: by the service).',
    labelNames: ['environment', 'reason'] as const,
    registers: [metrics.registry],
    async collect() {
      const counts = await scrapeRead(read);
      this.reset();
      if (counts === undefined) return;
      for (const environment of environments)
        for (const reason of disabledReasons) {
          const found = counts.find((c) => c.environment === environment && c.reason === reason);
          this.set({ environment, reason }, found?.count ?? 0);
        }
    },
  });
}

/**
 * The daily reconciliation (contract §16), read when `/metrics` is scraped from the latest date
 * with a finished report: `reconciliation_discrepancies{kind}` (that report's discrepancies by
 * kind, every kind exported, 0 included), `reconciliation_last_date_timestamp_seconds` (the start
 * of that business date in São Paulo: more than about 30 hours ago means a run is missing) and
 * `reconciliation_last_status{status}` (1 for its status, 0 for the others). Nothing is exported
 * before the first report.
 */
export function registerReconciliationGauges(
  metrics: HttpMetrics,
  read: () => Promise<
    | {
        date: string;
        status: ReconciliationStatus;
        discrepancies: { kind: string; count: number }[];
      }
    | undefined
  >,
): void {
  if (metrics.registry.getSingleMetric('reconciliation_discrepancies')) return;
  // One read per scrape for the three: the first gauge collected reads, the others reuse it. A
  // read the database does not answer is `unread`: no sample (NaN for the date), no alert.
  type Latest = { report: Awaited<ReturnType<typeof read>> } | undefined;
  let latest: Promise<Latest> | undefined;
  const readOnce = () =>
    (latest ??= scrapeRead(async () => ({ report: await read() })).finally(() =>
      setTimeout(() => (latest = undefined), 0),
    ));
  const latestReport = async () => (await readOnce())?.report;
  new Gauge({
    name: 'reconciliation_discrepancies',
    help: 'Discrepancies of the latest reconciliation report with the PSP, by kind (missing_notification: booked by the run).',
    labelNames: ['kind'] as const,
    registers: [metrics.registry],
    async collect() {
      this.reset();
      const report = await latestReport();
      if (!report) return;
      for (const kind of discrepancyKinds)
        this.set({ kind }, report.discrepancies.find((d) => d.kind === kind)?.count ?? 0);
    },
  });
  new Gauge({
    name: 'reconciliation_last_date_timestamp_seconds',
    help: 'Start (São Paulo) of the latest business date the reconciliation with the PSP reported on.',
    registers: [metrics.registry],
    async collect() {
      this.reset();
      const read = await readOnce();
      if (read === undefined) this.set(Number.NaN);
      else if (read.report) this.set(startOfBusinessDate(read.report.date) / 1000);
    },
  });
  new Gauge({
    name: 'reconciliation_last_status',
    help: 'Status of the latest reconciliation report with the PSP: 1 for its status, 0 for the others.',
    labelNames: ['status'] as const,
    registers: [metrics.registry],
    async collect() {
      this.reset();
      const report = await latestReport();
      if (!report) return;
      for (const status of reconciliationStatuses)
        this.set({ status }, report.status === status ? 1 : 0);
    },
  });
}
