import { Decimal as DecimalJs } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays, daysBetween } from '../../src/domain/business-date.js';
import {
  allocatePayment,
  payoffAmount,
  startRepayment,
  type Repayment,
  type RepaymentTerms,
} from '../../src/domain/loans/allocation.js';
import {
  owedRowsOn,
  type BookedPayment,
  type LoanBook,
} from '../../src/domain/regulatory/month-end.js';
import {
  buildDoc3040,
  bucketsOf,
  natureOf,
  type Assignment,
  type ClientSnapshot,
  type LoanSnapshot,
} from '../../src/domain/regulatory/scr3040.js';
import {
  bucketOfRow,
  bucketOfWriteOff,
  lastDayOfMonth,
  monthsBetween,
  riskClasses,
  riskClassOf,
} from '../../src/domain/regulatory/scr3040-tables.js';
import { escapeAttribute, reais, renderDoc3040 } from '../../src/domain/regulatory/scr3040-xml.js';
import { scr3040SchemaErrors, scr3040SchemaErrorsOf } from '../helpers/scr3040.js';

/** The test's own decimals: 40 digits, half-even. */
const Decimal = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_EVEN });

const institution = {
  cnpj: '11444777000161',
  responsibleName: 'Ana <Reg> & "Compliance"',
  responsibleEmail: 'scr@lender.example',
  responsiblePhone: '11999990000',
};

describe('the layout’s tables (Anexo 1, Res. 2.682)', () => {
  it('puts a row in its bucket by calendar days to or past its due date', () => {
    const end = '2026-03-31';
    const cases: [string, string][] = [
      ['2026-03-31', 'v110'], // due that day: still "a vencer"
      ['2026-04-30', 'v110'], // 30 days
      ['2026-05-01', 'v120'], // 31
      ['2026-06-29', 'v130'], // 90
      ['2026-06-30', 'v140'], // 91
      ['2027-03-26', 'v150'], // 360
      ['2027-03-27', 'v160'], // 361
      ['2026-03-30', 'v205'], // 1 day overdue
      ['2026-03-17', 'v205'], // 14
      ['2026-03-16', 'v210'], // 15
      ['2026-03-01', 'v210'], // 30
      ['2026-02-28', 'v220'], // 31
      ['2025-12-31', 'v230'], // 90
      ['2025-04-04', 'v270'], // 361 → no: 361 is v280
    ];
    cases.pop();
    for (const [due, bucket] of cases) expect([due, bucketOfRow(due, end)]).toEqual([due, bucket]);
    expect(bucketOfRow(addDays(end, -361), end)).toBe('v280');
    expect(bucketOfRow(addDays(end, -540), end)).toBe('v280');
    expect(bucketOfRow(addDays(end, -541), end)).toBe('v290');
    expect(bucketOfRow(addDays(end, 5401), end)).toBe('v190');
  });

  it('counts whole months since a write-off: up to 12 v310, up to 48 v320, then v330', () => {
    expect(monthsBetween('2026-01-31', '2026-02-28')).toBe(1); // the month's last day
    expect(monthsBetween('2026-01-31', '2026-03-31')).toBe(2);
    expect(monthsBetween('2026-01-15', '2026-02-14')).toBe(0);
    expect(bucketOfWriteOff('2025-03-31', '2026-03-31')).toBe('v310');
    expect(bucketOfWriteOff('2025-03-30', '2026-04-30')).toBe('v320');
    expect(bucketOfWriteOff('2022-03-31', '2026-03-31')).toBe('v320');
    expect(bucketOfWriteOff('2022-02-28', '2026-03-31')).toBe('v330');
    expect(lastDayOfMonth('2028-02')).toBe('2028-02-29');
  });

  it('classes by days overdue at Res. 2.682 art. 4º’s boundaries, never less risky for more days', () => {
    const boundaries: [number, string][] = [
      [0, 'A'],
      [14, 'A'],
      [15, 'B'],
      [30, 'B'],
      [31, 'C'],
      [60, 'C'],
      [61, 'D'],
      [90, 'D'],
      [91, 'E'],
      [120, 'E'],
      [121, 'F'],
      [150, 'F'],
      [151, 'G'],
      [180, 'G'],
      [181, 'H'],
    ];
    for (const [days, level] of boundaries)
      expect([days, riskClassOf(days)]).toEqual([days, level]);
    fc.assert(
      fc.property(fc.nat(2000), fc.nat(2000), (a, b) => {
        const [less, more] = a <= b ? [a, b] : [b, a];
        expect(riskClasses.indexOf(riskClassOf(more))).toBeGreaterThanOrEqual(
          riskClasses.indexOf(riskClassOf(less)),
        );
      }),
      { numRuns: 200 },
    );
  });
});

describe('an assigned loan (the seam the assignments part fills)', () => {
  const sale = (over: Partial<Assignment>): Assignment => ({
    assigneeCnpj: '11222333000181',
    assignee: 'fund',
    retainsRisk: false,
    coobligationPercent: 0,
    date: '2026-03-10',
    ...over,
  });

  it('is the lender’s own (01) before its sale and in a month the sale has not reached', () => {
    expect(natureOf(undefined, '2026-03-31')).toEqual({
      reported: true,
      natuOp: '01',
      assignmentInfo: null,
    });
    expect(natureOf(sale({}), '2026-02-28')).toMatchObject({ natuOp: '01', assignmentInfo: null });
  });

  it('sold without retention: reported the month of the sale with its Inf, gone after', () => {
    expect(natureOf(sale({}), '2026-03-31')).toEqual({
      reported: true,
      natuOp: '01',
      assignmentInfo: { tp: '0102', cd: '2026-03-10', ident: '11222333', perc: 0 },
    });
    expect(natureOf(sale({}), '2026-04-30')).toEqual({ reported: false });
  });

  it('sold with retention (coobrigação): 11 to the SFN, 15 to a fund, 14 to anyone else', () => {
    const kept = { retainsRisk: true, coobligationPercent: 100 };
    expect(natureOf(sale({ ...kept, assignee: 'sfn_institution' }), '2026-06-30')).toMatchObject({
      natuOp: '11',
      assignmentInfo: { ident: '11222333', perc: 100 },
    });
    expect(natureOf(sale({ ...kept, assignee: 'fund' }), '2026-06-30')).toMatchObject({
      natuOp: '15',
    });
    expect(natureOf(sale({ ...kept, assignee: 'other' }), '2026-06-30')).toMatchObject({
      natuOp: '14',
    });
  });
});

/** A random book: a schedule, its terms, and payments of random amounts on random days. */
const bookArbitrary = fc
  .record({
    start: fc.integer({ min: 0, max: 600 }).map((d) => addDays('2025-01-05', d)),
    count: fc.integer({ min: 1, max: 12 }),
    installment: fc.integer({ min: 50_00, max: 5_000_00 }),
    rateBp: fc.integer({ min: 50, max: 800 }),
    payments: fc.array(
      fc.record({
        afterDays: fc.integer({ min: 0, max: 90 }),
        share: fc.double({ min: 0.01, max: 1, noNaN: true }),
      }),
      { maxLength: 6 },
    ),
    endAfterDays: fc.integer({ min: 0, max: 500 }),
  })
  .map(({ start, count, installment, rateBp, payments, endAfterDays }) => {
    const terms: RepaymentTerms = {
      monthlyRate: String(rateBp / 10_000),
      lateCharges: { feeRate: '0.02', monthlyInterestRate: '0.01' },
    };
    const schedule = Array.from({ length: count }, (_, k) => ({
      number: k + 1,
      due_date: addDays(start, 30 * (k + 1)),
      installment_amount: installment,
      principal_amount: Math.floor(installment * 0.8),
    }));
    // A priced loan: the principal is what the rows are worth on the release day.
    const growth = (days: number) => new Decimal(1).plus(terms.monthlyRate).pow(days / 30);
    const principalAmount = schedule.reduce(
      (sum, row) =>
        sum +
        new Decimal(row.installment_amount)
          .div(growth(daysBetween(start, row.due_date)))
          .toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN)
          .toNumber(),
      0,
    );
    let repayment: Repayment = startRepayment(schedule, principalAmount);
    const booked: BookedPayment[] = [];
    const states: { date: string; repayment: Repayment }[] = [];
    let date = start;
    for (const payment of payments) {
      date = addDays(date, payment.afterDays);
      const owed = payoffAmount(repayment, date, terms);
      if (owed === 0 || repayment.rows.every((row) => row.paid_at !== null)) break;
      const amount = Math.max(1, Math.floor(owed * Math.min(payment.share, 1)));
      const paid = allocatePayment(
        repayment,
        { amount, date, paidAt: `${date}T15:00:00.000Z`, applyTo: 'next' },
        terms,
      );
      booked.push({
        date,
        type: 'payment',
        parts: paid.rows,
        installmentNumber: null,
        principal: paid.principal,
      });
      repayment = paid.after;
      states.push({ date, repayment });
      if (paid.finished) break;
    }
    const book: LoanBook = { schedule, principalAmount, terms, payments: booked };
    const monthEnd = lastDayOfMonth(addDays(start, endAfterDays).slice(0, 7));
    // The loan as its own payments left it at the month's end (what the workflow holds).
    const held = [...states].reverse().find((state) => state.date <= monthEnd)?.repayment;
    return { book, monthEnd, held: held ?? startRepayment(schedule, principalAmount), start };
  });

describe('a loan’s balance at the month’s end, in buckets', () => {
  it('sums exactly to what the loan owes that day, rebuilt from its payments as booked', () => {
    fc.assert(
      fc.property(bookArbitrary, ({ book, monthEnd, held, start }) => {
        if (monthEnd < start) return;
        const rows = owedRowsOn(book, monthEnd);
        const owes = held.rows.every((row) => row.paid_at !== null)
          ? 0
          : payoffAmount(held, monthEnd, book.terms);
        const loan: LoanSnapshot = {
          loanId: 'ln_test',
          contractDate: start,
          lastDueDate: book.schedule.at(-1)!.due_date,
          annualRate: 0.2682,
          rows,
          writtenOffOn: null,
        };
        const buckets = bucketsOf(loan, monthEnd);
        expect(buckets.reduce((sum, [, c]) => sum + c, 0)).toBe(owes);
        for (const [, centavos] of buckets) expect(Number.isSafeInteger(centavos)).toBe(true);
        // A written-off loan owes the same, all of it in one written-off bucket.
        const off = bucketsOf({ ...loan, writtenOffOn: addDays(monthEnd, -40) }, monthEnd);
        expect(off.reduce((sum, [, c]) => sum + c, 0)).toBe(owes);
        expect(off.length).toBeLessThanOrEqual(1);
      }),
      { numRuns: 100 },
    );
  });
});

const client = (over: Partial<ClientSnapshot>, loans: LoanSnapshot[]): ClientSnapshot => ({
  type: 'person',
  cpf: '52998224725',
  cnpj: null,
  relationshipSince: '2026-01-02',
  location: null,
  cep: null,
  loans,
  ...over,
});
const loanOf = (id: string, rows: { dueDate: string; owed: number }[]): LoanSnapshot => ({
  loanId: id,
  contractDate: '2026-01-05',
  lastDueDate: rows.at(-1)?.dueDate ?? '2026-06-05',
  annualRate: 0.4258,
  rows,
  writtenOffOn: null,
});

describe('the document', () => {
  it('validates against the subset’s schema, names escaped, amounts in reais', async () => {
    const doc = buildDoc3040({
      dataBase: '2026-03',
      monthEnd: '2026-03-31',
      institution,
      remessa: 1,
      clients: [
        client({}, [
          loanOf('ln_a', [
            { dueDate: '2026-02-05', owed: 41_230 },
            { dueDate: '2026-04-05', owed: 39_870 },
          ]),
        ]),
        client({ type: 'company', cpf: '11144477735', cnpj: '11222333000181' }, [
          {
            ...loanOf('ln_b', [{ dueDate: '2027-06-05', owed: 1_000_000 }]),
            writtenOffOn: '2026-02-01',
          },
        ]),
        client({ cpf: '39053344705', location: '10058' }, [
          loanOf('ln_c', [{ dueDate: '2026-04-05', owed: 150_00 }]),
        ]),
        client({ cpf: '15350946056', location: '10058' }, [
          loanOf('ln_d', [{ dueDate: '2026-04-20', owed: 120_00 }]),
        ]),
        // Under R$ 200, location unknown: reported on its own, never under a guessed Localiz.
        client({ cpf: '71428793860' }, [loanOf('ln_e', [{ dueDate: '2026-04-20', owed: 99_99 }])]),
      ],
    });
    const xml = renderDoc3040(doc);
    expect(await scr3040SchemaErrors(xml)).toEqual([]);
    expect(xml).toContain('NomeResp="Ana &lt;Reg&gt; &amp; &quot;Compliance&quot;"');
    expect(doc.clients.map((c) => c.cd)).toEqual(['52998224725', '71428793860', '11222333']);
    const first = doc.clients.find((c) => c.cd === '52998224725')!;
    expect(first.operations[0]).toMatchObject({
      mod: '0203',
      classOp: 'C', // 54 days overdue
      venc: [
        ['v110', 39_870],
        ['v220', 41_230],
      ],
      provConsttd: 2433, // 3 % of 811.00
    });
    expect(first.classCli).toBe('C');
    const company = doc.clients.find((c) => c.tp === '2')!;
    expect(company.operations[0]).toMatchObject({
      detCli: '11222333000181',
      mod: '0216',
      classOp: 'HH',
      venc: [['v310', 1_000_000]],
      provConsttd: 0,
    });
    expect(company.classCli).toBe('H');
    expect(doc.aggregates).toEqual([
      expect.objectContaining({
        mod: '0203',
        classOp: 'A',
        faixaVlr: '2',
        localiz: '10058',
        desempOp: '01',
        qtdOp: 2,
        qtdCli: 2,
        venc: [['v110', 270_00]],
      }),
    ]);
    expect(doc.totalCli).toBe(5);
    expect(reais(5)).toBe('0.05');
    expect(escapeAttribute('a\nb')).toBe('a&#10;b');
  });

  it('the schema refuses what the layout’s subset does not allow', async () => {
    const doc = buildDoc3040({
      dataBase: '2026-03',
      monthEnd: '2026-03-31',
      institution,
      remessa: 1,
      clients: [client({}, [loanOf('ln_a', [{ dueDate: '2026-04-05', owed: 500_00 }])])],
    });
    const xml = renderDoc3040(doc);
    const [valid, bucket, level, amount] = await scr3040SchemaErrorsOf([
      xml,
      xml.replace('v110=', 'v111='),
      xml.replace('ClassOp="A"', 'ClassOp="Z"'),
      xml.replace('"500.00"', '"500.0"'),
    ]);
    expect(valid).toEqual([]);
    expect(bucket).not.toEqual([]);
    expect(level).not.toEqual([]);
    expect(amount).not.toEqual([]);
  });

  it('random books make documents that validate, each loan’s buckets its balance', async () => {
    const samples = fc.sample(bookArbitrary, { numRuns: 8, seed: 3040 });
    const clients = samples
      .filter(({ monthEnd, start }) => monthEnd >= start)
      .map(({ book }, k) =>
        client({ cpf: String(10_000_000_000 + k * 7919).padStart(11, '0') }, [
          loanOf(`ln_${k}`, owedRowsOn(book, '2026-12-31')),
        ]),
      );
    const doc = buildDoc3040({
      dataBase: '2026-12',
      monthEnd: '2026-12-31',
      institution,
      remessa: 2,
      clients,
    });
    expect(await scr3040SchemaErrors(renderDoc3040(doc))).toEqual([]);
    for (const cli of doc.clients)
      for (const op of cli.operations)
        expect(op.venc.reduce((sum, [, c]) => sum + c, 0)).toBe(op.owed);
    expect(daysBetween('2026-12-01', '2026-12-31')).toBe(30);
  });
});
