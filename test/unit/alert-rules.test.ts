import { temporalSdkMetrics } from '../helpers/temporal-sdk-metrics.js';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { parse } from 'yaml';
import { promtoolPath, runPromtool } from '../../src/devstack/promtool.js';
import { projectRoot } from '../../src/project-root.js';

/**
 * The alert rules of docs/operations/prometheus/ (issue 42), checked by Prometheus's own promtool
 * (built by `npm run provision`): the rules and the scrape configuration parse, and the unit tests
 * of alerts.test.yml — series in, alerts out — pass. Around it, what promtool cannot know: every
 * rule links a runbook that exists, is tested both firing and silent, and reads only metrics this
 * service exports.
 */

const prometheusDir = join(projectRoot, 'docs/operations/prometheus');
const read = (file: string) => readFileSync(join(prometheusDir, file), 'utf8');

interface Rule {
  alert: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface AlertTestCase {
  alertname: string;
  exp_alerts?: unknown[] | null;
}
const rules = (parse(read('alerts.yml')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (group) => group.rules,
);
const cases = (
  parse(read('alerts.test.yml')) as { tests: { alert_rule_test?: AlertTestCase[] }[] }
).tests.flatMap((test) => test.alert_rule_test ?? []);

let promtool: string;
let scratch: string;
beforeAll(async () => {
  // Provisioning builds it before the suite; a cold build here takes minutes.
  promtool = await promtoolPath();
  scratch = mkdtempSync(join(tmpdir(), 'alert-rules-'));
}, 20 * 60_000);
afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('promtool', () => {
  it('accepts the rules, with no lint finding', async () => {
    const result = await runPromtool(
      promtool,
      ['check', 'rules', '--lint=all', '--lint-fatal', 'alerts.yml'],
      prometheusDir,
    );
    expect(result.code, result.output).toBe(0);
  });

  it('passes the unit tests: each alert fires on its series and stays silent where it must', async () => {
    const result = await runPromtool(promtool, ['test', 'rules', 'alerts.test.yml'], prometheusDir);
    expect(result.code, result.output).toBe(0);
  });

  it('fails a unit test whose expectation is wrong, naming the alert', async () => {
    writeFileSync(join(scratch, 'alerts.yml'), read('alerts.yml'));
    writeFileSync(
      join(scratch, 'wrong.test.yml'),
      [
        'rule_files: [alerts.yml]',
        'tests:',
        '  - interval: 1m',
        '    input_series:',
        `      - series: 'ledger_imbalance_centavos{job="embedded-credit-api",environment="production"}'`,
        "        values: '500x5'",
        '    alert_rule_test:',
        '      - eval_time: 2m',
        '        alertname: LedgerImbalance',
        '        exp_alerts: []',
        '',
      ].join('\n'),
    );
    const result = await runPromtool(promtool, ['test', 'rules', 'wrong.test.yml'], scratch);
    expect(result.code).toBe(1);
    expect(result.output).toContain('alertname: LedgerImbalance');
  });

  it('reads the scrape configuration', async () => {
    const result = await runPromtool(
      promtool,
      ['check', 'config', '--syntax-only', 'prometheus.yml'],
      prometheusDir,
    );
    expect(result.code, result.output).toBe(0);
  });
});

describe('the rules', () => {
  it('are there', () => {
    expect(rules.length).toBeGreaterThanOrEqual(9);
  });

  it.each(rules.map((rule) => [rule.alert, rule] as const))(
    '%s says how bad, what and where its runbook is',
    (_name, rule) => {
      expect(['page', 'ticket']).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary).toBeTruthy();
      expect(rule.annotations?.description).toBeTruthy();
      const runbook = rule.annotations?.runbook_url ?? '';
      expect(runbook).toMatch(/^docs\/runbooks\/[a-z0-9-]+\.md$/);
      expect(existsSync(join(projectRoot, runbook)), `${runbook} exists`).toBe(true);
    },
  );

  it.each(rules.map((rule) => rule.alert))('%s is tested firing and not firing', (name) => {
    const mine = cases.filter((c) => c.alertname === name);
    expect(mine.some((c) => (c.exp_alerts ?? []).length > 0)).toBe(true);
    expect(mine.some((c) => (c.exp_alerts ?? []).length === 0)).toBe(true);
  });

  it('read only metrics the service exports', () => {
    const exported = exportedMetrics();
    const read = new Set(rules.flatMap((rule) => metricsIn(rule.expr)));
    expect([...read].filter((name) => !exported.has(name))).toEqual([]);
    // The extraction finds what it should (so the check above is not vacuous).
    expect(read).toContain('ledger_imbalance_centavos');
    expect(read).toContain('http_requests_total');
  });
});

describe('the dashboard', () => {
  it('charts only metrics the service exports', () => {
    const dashboard = JSON.parse(
      readFileSync(join(projectRoot, 'docs/operations/grafana/embedded-credit.json'), 'utf8'),
    ) as { panels: { title: string; targets: { expr: string }[] }[] };
    const exported = exportedMetrics();
    const unknown = dashboard.panels.flatMap((panel) =>
      panel.targets
        .flatMap((target) => metricsIn(target.expr))
        .filter((name) => !exported.has(name))
        .map((name) => `${panel.title}: ${name}`),
    );
    expect(unknown).toEqual([]);
    expect(dashboard.panels.length).toBeGreaterThan(0);
  });
});

/**
 * Metric names the service's registries declare, prom-client's process metrics, their histogram
 * series, Prometheus's `up` and the Temporal SDK's that the workers' `/metrics` carries.
 */
function exportedMetrics(): Set<string> {
  const sources = [
    'src/http/metrics.ts',
    'src/worker/metrics.ts',
    'src/observability/certificate-expiry.ts',
  ].map((file) => readFileSync(join(projectRoot, file), 'utf8'));
  const names = sources.flatMap((text) => [...text.matchAll(/name: '([a-z_:][a-z0-9_:]*)'/g)]);
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  // Prometheus's own, and the Temporal SDK's the worker's /metrics carries (seen on a real worker).
  const all = new Set<string>(['up', ...temporalSdkMetrics]);
  for (const name of [
    ...names.map(([, name]) => name!),
    ...defaults.getMetricsAsArray().map((metric) => metric.name),
  ]) {
    all.add(name);
    for (const suffix of ['_bucket', '_sum', '_count']) all.add(`${name}${suffix}`);
  }
  return all;
}

const PROMQL_WORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on']);

/** The metric names a PromQL expression selects (labels, strings, ranges and functions aside). */
function metricsIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/(?<![\w.])([a-zA-Z_:][\w:]*)(\s*\()?/g)]
    .filter(([, name, call]) => !call && !PROMQL_WORDS.has(name!))
    .map(([, name]) => name!);
}
