import { Decimal as DecimalJs } from 'decimal.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app.js';
import { createHttpMetrics } from '../../src/http/metrics.js';
import { createLogger } from '../../src/logger.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, businessDate, daysBetween } from '../../src/domain/business-date.js';
import { lastDayWithoutCharges } from '../../src/domain/calendar/business-days.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import { moneyDesk, staff } from '../helpers/operators.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { scr3040SchemaErrors } from '../helpers/scr3040.js';
import { OPS_TOKEN, startStack, TestClock, type TestStack } from '../helpers/stack.js';

/** The test's own decimals: 40 digits, half-even, independent of the service's setup. */
const Decimal = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_EVEN });
const halfEven = (value: DecimalJs) => value.toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber();

/** Anexo 1's bands as the test reads them: the first bucket whose bound holds the days. */
const toMaturity: [number, string][] = [
  [30, 'v110'],
  [60, 'v120'],
  [90, 'v130'],
  [180, 'v140'],
  [360, 'v150'],
  [720, 'v160'],
];
const pastDue: [number, string][] = [
  [14, 'v205'],
  [30, 'v210'],
  [60, 'v220'],
  [90, 'v230'],
  [120, 'v240'],
  [150, 'v245'],
];
const bucket = (due: string, monthEnd: string) => {
  const ahead = daysBetween(monthEnd, due);
  const [table, days] = ahead >= 0 ? [toMaturity, ahead] : [pastDue, -ahead];
  return table.find(([max]) => days <= max)![1];
};
const lastDayOf = (month: string) => {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m, 0)).toISOString().slice(0, 10);
};
const nextMonth = (month: string, k = 1) => {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m - 1 + k, 1)).toISOString().slice(0, 7);
};

/** `<Op Contrt="id" …>` of the document: its attributes and its Venc's, as the text says. */
function operationIn(xml: string, loanId: string) {
  const match = new RegExp(`<Op ([^>]*Contrt="${loanId}"[^>]*)>\\s*<Venc ([^>]*)/>`).exec(xml);
  if (!match) return null;
  const attributes = (text: string) =>
    Object.fromEntries([...text.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
  const venc = Object.fromEntries(
    Object.entries(attributes(match[2]!)).map(([code, reais]) => [
      code,
      halfEven(new Decimal(reais).times(100)),
    ]),
  );
  return { op: attributes(match[1]!), venc };
}

const clock = new TestClock();
const scrEnv = {
  SCR_INSTITUTION_CNPJ: '11444777000161',
  SCR_RESPONSIBLE_NAME: 'Ana <Regulatório> & Cia',
  SCR_RESPONSIBLE_EMAIL: 'scr@lender.example',
  SCR_RESPONSIBLE_PHONE: '1133334444',
};
let stack: TestStack;
let production: Client;
let untouched: LoanBody;
let paidInPart: LoanBody;
let today: string;

const exportOf = (dataBase: string, token = staff().admins[0].token) =>
  fetch(`${stack.baseUrl}/ops/v1/regulatory/scr3040?data_base=${dataBase}`, {
    headers: { authorization: `Bearer ${token}` },
  });

beforeAll(async () => {
  stack = await startStack({ clock, env: { ...scrEnv, SANDBOX_REVIEW_DELAY: '1h' } });
  const partner = await createPartner(stack);
  production = client(stack, await tokenFor(stack, partner.credentials.production));
  const options = { opsToken: OPS_TOKEN, production: true } as const;
  [untouched, paidInPart] = await Promise.all([
    activeLoan(stack, production, options),
    activeLoan(stack, production, options),
  ]);
  today = businessDate(clock.now());
  // Half of the first installment, paid today (a maker and a checker: dual control).
  const desk = await moneyDesk(stack);
  await json(
    desk(`/loans/${paidInPart.id}/payments`, {
      amount: Math.floor(paidInPart.installment_amount / 2),
      reference: `scr-${paidInPart.id}`,
    }),
    200,
  );
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

describe('GET /ops/v1/regulatory/scr3040 (contract §19)', () => {
  it('refuses a month that has not ended, a malformed one, and anyone but an administrator', async () => {
    const month = today.slice(0, 7);
    const current = await exportOf(month);
    expect(current.status).toBe(422);
    expect(await current.json()).toMatchObject({
      code: 'validation_error',
      errors: [{ path: 'query.data_base', code: 'month_not_ended' }],
    });
    const malformed = await exportOf('2026-13');
    expect(malformed.status).toBe(422);
    expect(await malformed.json()).toMatchObject({
      errors: [{ path: 'query.data_base', code: 'invalid_format' }],
    });
    const desk = await exportOf('2020-01', staff().desk.token);
    expect(desk.status).toBe(403);
    expect(await desk.json()).toMatchObject({ code: 'operator_role_required' });
  });

  it('reports the month: the schema holds, and each loan’s buckets are what it owes that day', async () => {
    const month = today.slice(0, 7);
    const monthEnd = lastDayOf(month);
    // What the partner is told the part-paid loan owes on the month's last day, row by row.
    const quote = await json<{
      payoff_amount: number;
      rows: { due_date: string; present_value: number }[];
    }>(production(`/v3/loans/${paidInPart.id}/payoff?date=${monthEnd}`));

    clock.advance((daysBetween(today, monthEnd) + 2) * 86_400_000);
    const answer = await exportOf(month);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/xml/);
    const xml = await answer.text();
    expect(await scr3040SchemaErrors(xml)).toEqual([]);
    expect(xml).toContain(`DtBase="${month}" CNPJ="11444777"`);
    expect(xml).toContain('NomeResp="Ana &lt;Regulatório&gt; &amp; Cia"');

    // Nothing paid: each row at its value that day, (1 + i)^(d/30) on calendar days.
    const rate = new Decimal(untouched.monthly_interest_rate);
    const expected: Record<string, number> = {};
    for (const row of untouched.schedule) {
      const days = daysBetween(monthEnd, row.due_date);
      const value = halfEven(
        new Decimal(row.installment_amount).div(rate.plus(1).pow(new Decimal(days).div(30))),
      );
      const code = bucket(row.due_date, monthEnd);
      expected[code] = (expected[code] ?? 0) + value;
    }
    const own = operationIn(xml, untouched.id)!;
    expect(own.venc).toEqual(expected);
    expect(own.op).toMatchObject({
      NatuOp: '01',
      Mod: '0203',
      Indx: '11',
      ClassOp: 'A',
      DtVencOp: untouched.schedule.at(-1)!.due_date,
    });

    const part = operationIn(xml, paidInPart.id)!;
    const quoted: Record<string, number> = {};
    for (const row of quote.rows)
      quoted[bucket(row.due_date, monthEnd)] =
        (quoted[bucket(row.due_date, monthEnd)] ?? 0) + row.present_value;
    expect(part.venc).toEqual(quoted);
    expect(Object.values(part.venc).reduce((a, b) => a + b, 0)).toBe(quote.payoff_amount);
  });

  it('three months on, the overdue rows in their days-past-due buckets and the class they make', async () => {
    const month = nextMonth(today.slice(0, 7), 3);
    const monthEnd = lastDayOf(month);
    clock.advance((daysBetween(businessDate(clock.now()), monthEnd) + 1) * 86_400_000);
    const answer = await exportOf(month);
    expect(answer.status).toBe(200);
    const xml = await answer.text();
    expect(await scr3040SchemaErrors(xml)).toEqual([]);

    const rate = new Decimal(untouched.monthly_interest_rate);
    const expected: Record<string, number> = {};
    let oldest = 0;
    for (const row of untouched.schedule) {
      const amount = new Decimal(row.installment_amount);
      const ahead = daysBetween(monthEnd, row.due_date);
      let owed: number;
      if (ahead > 0) owed = halfEven(amount.div(rate.plus(1).pow(new Decimal(ahead).div(30))));
      else if (monthEnd > lastDayWithoutCharges(row.due_date)) {
        // Late: a 2 % fee once, and 1 % a month pro rata die from the due date (§12's defaults).
        const late = -ahead;
        owed =
          row.installment_amount +
          halfEven(amount.times('0.02')) +
          halfEven(amount.times('0.01').times(late).div(30));
        oldest = Math.max(oldest, late);
      } else owed = row.installment_amount;
      const code = bucket(row.due_date, monthEnd);
      expected[code] = (expected[code] ?? 0) + owed;
    }
    expect(oldest).toBeGreaterThan(30);
    const own = operationIn(xml, untouched.id)!;
    expect(own.venc).toEqual(expected);
    const level = oldest <= 60 ? 'C' : oldest <= 90 ? 'D' : 'E';
    expect(own.op.ClassOp).toBe(level);
    // Res. 2.682 art. 6º: the level's minimum provision on the balance.
    const balance = Object.values(expected).reduce((a, b) => a + b, 0);
    const share = { C: '0.03', D: '0.1', E: '0.3' }[level];
    expect(halfEven(new Decimal(own.op.ProvConsttd!).times(100))).toBe(
      halfEven(new Decimal(balance).times(share)),
    );
    expect(addDays(monthEnd, 1) > today).toBe(true);
  });

  it('answers 409 scr_not_configured while the SCR settings are unset (development only)', async () => {
    // The same service on the same database, configured without them.
    const { koa, close } = createApp({
      config: { ...stack.config, scr: null },
      database: stack.database,
      files: stack.files,
      temporal: stack.temporal,
      logger: createLogger('silent', 'test'),
      metrics: createHttpMetrics({ processMetrics: false }),
      clock: clock.now,
    });
    const handle = koa.callback();
    const server = createServer((request, response) => void handle(request, response)).listen(
      0,
      '127.0.0.1',
    );
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await fetch(
        `http://127.0.0.1:${port}/ops/v1/regulatory/scr3040?data_base=${today.slice(0, 7)}`,
        { headers: { authorization: `Bearer ${staff().admins[0].token}` } },
      );
      expect(answer.status).toBe(409);
      expect(await answer.json()).toMatchObject({ code: 'scr_not_configured' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await close();
    }
  });

  it('audits every export with the month asked, whoever reads it', async () => {
    const admin = staff().admins[0];
    const page = await json<{ data: { operation_id: string; status: number; detail: unknown }[] }>(
      fetch(
        `${stack.baseUrl}/ops/v1/audit?operation_id=getScr3040&actor_id=${admin.operator.id}&limit=100`,
        { headers: { authorization: `Bearer ${admin.token}` } },
      ),
    );
    const months = page.data.map((row) => [
      row.status,
      (row.detail as { data_base?: string })?.data_base,
    ]);
    expect(months).toEqual(
      expect.arrayContaining([
        [422, today.slice(0, 7)],
        [200, today.slice(0, 7)],
        [200, nextMonth(today.slice(0, 7), 3)],
      ]),
    );
  });
});
