import { describe, expect, it } from 'vitest';
import {
  createHttpMetrics,
  registerDatabaseUp,
  registerDisabledEndpointsGauge,
  registerLedgerGauge,
  registerOutboxGauge,
  registerReconciliationGauges,
  registerUnmatchedPixGauge,
  SCRAPE_READ_TIMEOUT_MS,
} from '../../src/http/metrics.js';

/** The API's gauges read from PostgreSQL, over `reads`: what a scrape answers. */
async function scrape(reads: {
  ping: () => Promise<unknown>;
  ledger: () => Promise<Record<string, number>>;
  unmatched: () => Promise<number>;
  outbox: () => Promise<number>;
}) {
  const metrics = createHttpMetrics({ processMetrics: false });
  registerDatabaseUp(metrics, reads.ping);
  registerLedgerGauge(metrics, reads.ledger);
  registerUnmatchedPixGauge(metrics, reads.unmatched);
  registerOutboxGauge(metrics, reads.outbox);
  registerReconciliationGauges(metrics, async () => {
    await reads.ping();
    return { date: '2026-11-27', status: 'matched', discrepancies: [] };
  });
  registerDisabledEndpointsGauge(metrics, async () => {
    await reads.ping();
    return [{ environment: 'production', reason: 'failing', count: 2 }];
  });
  metrics.observe('GET', '/v3/loans', 200, 0.01);
  const started = Date.now();
  const text = await metrics.registry.metrics();
  const samples = text.split('\n').filter((line) => line && !line.startsWith('#'));
  return { samples, seconds: (Date.now() - started) / 1000 };
}

describe("the API's /metrics with PostgreSQL unreachable", () => {
  it('still answers: the process figures and database_up 0, no stale gauge values', async () => {
    const refused = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    const { samples, seconds } = await scrape({
      ping: refused,
      ledger: refused,
      unmatched: refused,
      // A partition: the connection attempt neither succeeds nor fails.
      outbox: () => new Promise<number>(() => {}),
    });
    expect(samples).toContain('database_up 0');
    expect(samples.some((line) => line.startsWith('http_requests_total{'))).toBe(true);
    // Labelled gauges have no sample; unlabelled ones are NaN (prom-client writes `Nan`, which
    // Prometheus reads as NaN), which no rule's comparison holds for.
    for (const gauge of [
      'ledger_imbalance_centavos',
      'webhook_endpoints_disabled',
      'reconciliation_discrepancies',
      'reconciliation_last_status',
    ])
      expect(
        samples.filter((line) => line.startsWith(gauge)),
        gauge,
      ).toEqual([]);
    expect(samples).toEqual(
      expect.arrayContaining([
        'unmatched_pix Nan',
        'workflow_outbox_oldest_pending_seconds Nan',
        'reconciliation_last_date_timestamp_seconds Nan',
      ]),
    );
    // Bounded by the read timeout, well inside Prometheus' scrape timeout (10 s).
    expect(seconds).toBeLessThan(SCRAPE_READ_TIMEOUT_MS / 1000 + 1);
  });

  it('reads every gauge with database_up 1 when it answers', async () => {
    const { samples } = await scrape({
      ping: async () => [],
      ledger: async () => ({ production: 0, sandbox: 0 }),
      unmatched: async () => 3,
      outbox: async () => 12,
    });
    expect(samples).toEqual(
      expect.arrayContaining([
        'database_up 1',
        'ledger_imbalance_centavos{environment="production"} 0',
        'unmatched_pix 3',
        'workflow_outbox_oldest_pending_seconds 12',
        'webhook_endpoints_disabled{environment="production",reason="failing"} 2',
        'webhook_endpoints_disabled{environment="sandbox",reason="manual"} 0',
        'reconciliation_last_status{status="matched"} 1',
        'reconciliation_discrepancies{kind="amount_mismatch"} 0',
      ]),
    );
  });
});
