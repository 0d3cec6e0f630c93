import { Decimal as DecimalJs } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { reconcileLedger } from '../../src/db/queries/ledger.js';
import { addDays, businessDate, daysBetween } from '../../src/domain/business-date.js';
import type { chargeSchema } from '../../src/http/routes/charges/schema.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import { eventually } from '../helpers/eventually.js';
import {
  createOperator,
  moneyDesk,
  opsRequest,
  staff,
  type TestOperator,
} from '../helpers/operators.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { endToEndId, notifyPsp, valor } from '../helpers/psp.js';
import { scr3040SchemaErrors } from '../helpers/scr3040.js';
import { OPS_TOKEN, startStack, TestClock, type TestStack } from '../helpers/stack.js';

/** The test's own decimals (50 digits, half-even) and power: apart from the service's. */
const Decimal = DecimalJs.clone({ precision: 50, rounding: DecimalJs.ROUND_HALF_EVEN });
const pv = (amount: number, rate: string, days: number) =>
  new Decimal(amount)
    .div(new Decimal(1).plus(rate).pow(new Decimal(Math.max(0, days)).div(30)))
    .toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN)
    .toNumber();

interface AssignmentBody {
  id: string;
  status: string;
  price: number;
  loans: { loan_id: string; price: number; rows: { number: number; present_value: number }[] }[];
}
interface Accounts {
  accounts: { account: string; balance: number }[];
}

const BUYER = { name: 'FIDC Exemplo Multissetorial', cnpj: '11.222.333/0001-81' };
const RATE = '0.015';
const clock = new TestClock();
let stack: TestStack;
let production: Client;
let sold: LoanBody;
let withdrawn: LoanBody;
let today: string;
/** A second operator of the payments desk: the maker of the settlement (the seeded desk checks). */
let maker: TestOperator;
/** The batch sold (the third test), and what its loans collected for the buyer that day. */
let batch: AssignmentBody;
let dayTotal: number;

const ops = (path: string, token = OPS_TOKEN) =>
  fetch(`${stack.baseUrl}/ops/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
const post = (path: string, body?: unknown, token = OPS_TOKEN) =>
  opsRequest(stack, token, path, body);
const balanceOf = async (loanId: string, account: string) =>
  (await json<Accounts>(ops(`/loans/${loanId}/ledger`))).accounts.find(
    (row) => row.account === account,
  )?.balance ?? 0;
const problemOf = async (response: Response) =>
  (await response.json()) as { code: string; errors: { path: string; code: string }[] };
const newBatch = (loanIds: string[], settlementDate: string) =>
  post('/assignments', {
    assignee: BUYER,
    discount_rate_monthly: RATE,
    settlement_date: settlementDate,
    loan_ids: loanIds,
  });

beforeAll(async () => {
  stack = await startStack({
    clock,
    env: {
      SANDBOX_REVIEW_DELAY: '1h',
      SCR_INSTITUTION_CNPJ: '11444777000161',
      SCR_RESPONSIBLE_NAME: 'Ana',
      SCR_RESPONSIBLE_EMAIL: 'scr@lender.example',
      SCR_RESPONSIBLE_PHONE: '1133334444',
    },
  });
  const partner = await createPartner(stack);
  production = client(stack, await tokenFor(stack, partner.credentials.production));
  const options = { opsToken: OPS_TOKEN, production: true } as const;
  [sold, withdrawn, maker] = await Promise.all([
    activeLoan(stack, production, options),
    activeLoan(stack, production, options),
    createOperator(stack, ['payments']),
  ]);
  today = businessDate(clock.now());
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

describe('assignments (contract §19)', () => {
  it('refuses bad input, reporting every field, and anyone outside the payments desk', async () => {
    const bad = await post('/assignments', {
      assignee: { name: ' ', cnpj: '11.222.333/0001-82' },
      discount_rate_monthly: '0.25',
      settlement_date: addDays(today, -1),
      loan_ids: [sold.id, sold.id],
    });
    expect(bad.status).toBe(422);
    const problem = (await bad.json()) as {
      code: string;
      errors: { path: string; code: string }[];
    };
    expect(problem.code).toBe('validation_error');
    expect(
      problem.errors.map((e: { path: string; code: string }) => `${e.path}:${e.code}`).sort(),
    ).toEqual([
      'body.assignee.cnpj:invalid_format',
      'body.assignee.name:too_short',
      'body.discount_rate_monthly:out_of_range',
      'body.loan_ids.1:duplicate',
    ]);
    // Well formed, but in the past and naming loans that cannot be sold.
    const refused = await newBatch([sold.id, `ln_${'0'.repeat(32)}`], addDays(today, -1));
    expect(refused.status).toBe(422);
    expect((await problemOf(refused)).errors).toMatchObject([
      { path: 'body.settlement_date', code: 'out_of_range' },
    ]);
    const farAhead = await newBatch([sold.id], addDays(today, 367));
    expect((await problemOf(farAhead)).errors).toMatchObject([
      { path: 'body.settlement_date', code: 'out_of_range' },
    ]);
    const unknown = await newBatch([sold.id, `ln_${'0'.repeat(32)}`], today);
    expect(await unknown.json()).toMatchObject({
      status: 422,
      errors: [{ path: 'body.loan_ids.1', code: 'loan_not_assignable' }],
    });
    const admin = await post('/assignments', {}, staff().admins[0].token);
    expect(admin.status).toBe(403);
    expect((await problemOf(admin)).code).toBe('operator_role_required');
    // Nothing was written: the loan is free to sell.
    expect((await json<LoanBody>(production(`/v3/loans/${sold.id}`))).assignment_id).toBeNull();
  });

  it('a batch is settled on its date only, and a cancelled one lets its loans go', async () => {
    const later = await json<AssignmentBody>(newBatch([sold.id], addDays(today, 1)), 201);
    expect(later.status).toBe('draft');
    const again = await newBatch([sold.id], today);
    expect(await again.json()).toMatchObject({
      errors: [{ path: 'body.loan_ids.0', code: 'loan_not_assignable' }],
    });
    expect((await post(`/assignments/${later.id}/settle`)).status).toBe(409); // a draft
    await json(post(`/assignments/${later.id}/submit`));
    const early = await post(`/assignments/${later.id}/settle`);
    expect(early.status).toBe(409);
    expect((await problemOf(early)).code).toBe('assignment_not_due');
    expect(await json<AssignmentBody>(post(`/assignments/${later.id}/cancel`))).toMatchObject({
      status: 'cancelled',
    });
    const listed = await json<{ data: { id: string; status: string }[] }>(
      ops('/assignments?limit=100'),
    );
    expect(listed.data.find((a) => a.id === later.id)?.status).toBe('cancelled');
    // Cancelled again: the batch as it is.
    expect((await json<AssignmentBody>(post(`/assignments/${later.id}/cancel`))).status).toBe(
      'cancelled',
    );
  });

  it('prices, settles under dual control, derecognizes, and leaves the borrower’s debt as it was', async () => {
    const draft = await json<AssignmentBody>(newBatch([withdrawn.id, sold.id], today), 201);
    // Each row at its present value on the settlement date, computed here independently.
    const expected = (loan: LoanBody) =>
      loan.schedule.reduce(
        (sum, row) => sum + pv(row.installment_amount, RATE, daysBetween(today, row.due_date)),
        0,
      );
    expect(draft.loans.map((l) => [l.loan_id, l.price]).sort()).toEqual(
      [
        [sold.id, expected(sold)],
        [withdrawn.id, expected(withdrawn)],
      ].sort(),
    );
    expect(draft.price).toBe(expected(sold) + expected(withdrawn));
    const submitted = await json<AssignmentBody>(post(`/assignments/${draft.id}/submit`));
    expect(submitted).toMatchObject({ status: 'submitted', price: draft.price });

    const quoteDate = addDays(today, 10);
    const quoteOf = (loan: LoanBody) =>
      json(production(`/v3/loans/${loan.id}/payoff?date=${quoteDate}`));
    const quoteBefore = await quoteOf(sold);
    expect(await balanceOf(sold.id, 'loan_principal')).toBe(sold.principal_amount);

    const held = await post(`/assignments/${draft.id}/settle`, undefined, maker.token);
    expect(held.status).toBe(202);
    const approval = (await held.json()) as {
      id: string;
      kind: string;
      status: string;
      request: Record<string, unknown>;
    };
    expect(approval).toMatchObject({ kind: 'assignment', status: 'pending' });
    expect(approval.request).toMatchObject({ assignment_id: draft.id, price: draft.price });
    const byMaker = await post(`/approvals/${approval.id}/approve`, undefined, maker.token);
    expect(byMaker.status).toBe(403);
    expect((await problemOf(byMaker)).code).toBe('approval_by_maker');
    const decided = await json<{ status: string; outcome: unknown }>(
      post(`/approvals/${approval.id}/approve`, undefined, staff().desk.token),
    );
    expect(decided, JSON.stringify(decided.outcome)).toMatchObject({ status: 'approved' });

    const settled = await json<AssignmentBody>(ops(`/assignments/${draft.id}`));
    expect(settled).toMatchObject({ status: 'settled', approval_id: approval.id });
    const loan = await json<LoanBody>(production(`/v3/loans/${sold.id}`));
    expect(loan).toMatchObject({
      status: 'active',
      assignment_id: draft.id,
      assigned_to: { name: BUYER.name, cnpj: '11222333000181' },
      schedule: sold.schedule,
    });
    // The lender's book holds none of it; the borrower owes exactly what it owed.
    expect(await balanceOf(sold.id, 'loan_principal')).toBe(0);
    expect(await quoteOf(sold)).toEqual(quoteBefore);
    const receivable = await balanceOf(sold.id, 'assignment_receivable');
    expect(receivable).toBe(expected(sold));
    // Price − (principal + interest accrued today): the result (a gain: the rate is below the loan’s).
    const result = await balanceOf(sold.id, 'assignment_result');
    const interest = await balanceOf(sold.id, 'interest_income');
    expect(receivable + result).toBe(sold.principal_amount - interest);
    const events = await json<{ data: { type: string; data: LoanBody }[] }>(
      production(`/v3/events?type=loan.assigned&resource_id=${sold.id}`),
    );
    expect(events.data).toHaveLength(1);
    expect(events.data[0]!.data.assigned_to).toEqual({ name: BUYER.name, cnpj: '11222333000181' });
    // Its debt is the buyer's to renegotiate: no agreement (refused before anything is read).
    const agreement = await production(`/v3/loans/${sold.id}/agreements`, {
      method: 'POST',
      body: { simulation_id: `ags_${'0'.repeat(32)}` },
    });
    expect(agreement.status).toBe(409);
    expect((await problemOf(agreement)).code).toBe('loan_assigned');
    // A settled sale is not undone, and the loan is in no other batch.
    expect((await post(`/assignments/${draft.id}/cancel`)).status).toBe(409);
    expect((await newBatch([sold.id], today)).status).toBe(422);

    // Serviced after the sale: a payment, and the other loan's withdrawal, are the buyer's.
    const desk = await moneyDesk(stack);
    const paid = await json<LoanBody>(
      desk(`/loans/${sold.id}/payments`, { amount: 5_000, reference: `asg-${sold.id}` }),
    );
    expect(paid.outstanding_amount).toBeLessThan(loan.outstanding_amount);
    expect(await balanceOf(sold.id, 'loan_principal')).toBe(0);
    expect(await balanceOf(sold.id, 'payable_to_assignee')).toBe(-5_000);
    type Charge = z.infer<typeof chargeSchema>;
    const charge = await json<Charge>(
      production(`/v3/loans/${withdrawn.id}/withdrawal`, { method: 'POST' }),
      201,
    );
    expect(charge.amount).toBe(withdrawn.requested_amount);
    const e2e = endToEndId();
    await json(
      notifyPsp(
        stack.baseUrl,
        JSON.stringify({
          pix: [
            {
              endToEndId: e2e,
              txid: charge.txid,
              valor: valor(charge.amount),
              horario: new Date().toISOString(),
            },
          ],
        }),
      ),
    );
    await eventually(async () => {
      const after = await json<LoanBody>(production(`/v3/loans/${withdrawn.id}`));
      return after.cancellation_reason === 'withdrawal' ? after : undefined;
    }, 'the withdrawal');
    expect(await balanceOf(withdrawn.id, 'payable_to_assignee')).toBe(-charge.amount);
    const report = await json<{
      total: number;
      remittances: { loan_id: string; type: string; amount: number }[];
    }>(ops(`/assignments/${draft.id}/remittances?date=${today}`));
    expect(report.remittances.map((r) => [r.loan_id, r.type, r.amount]).sort()).toEqual(
      [
        [sold.id, 'payment', 5_000],
        [withdrawn.id, 'withdrawal', charge.amount],
      ].sort(),
    );
    expect(report.total).toBe(5_000 + charge.amount);
    [batch, dayTotal] = [settled, report.total];
    const none = await json<{ total: number }>(
      ops(`/assignments/${draft.id}/remittances?date=${addDays(today, -1)}`),
    );
    expect(none.total).toBe(0);

    // One line per installment sold.
    const csv = await ops(`/assignments/${draft.id}/installments.csv`);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await csv.text()).trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'loan_id,contract_sha256,cpf,installment_number,due_date,amount,present_value',
    );
    expect(lines).toHaveLength(1 + sold.installments + withdrawn.installments);
    const first = sold.schedule[0]!;
    expect(lines).toContain(
      [
        sold.id,
        sold.contract_sha256,
        sold.signers[0]!.cpf,
        1,
        first.due_date,
        first.installment_amount,
        pv(first.installment_amount, RATE, daysBetween(today, first.due_date)),
      ].join(','),
    );
    // The commands and the export are audited, naming the batch.
    for (const operation of ['createAssignment', 'settleAssignment', 'getAssignmentInstallments']) {
      const audit = await json<{ data: unknown[] }>(
        ops(`/audit?operation_id=${operation}&limit=100`, staff().admins[0].token),
      );
      expect(audit.data.some((row) => JSON.stringify(row).includes(draft.id))).toBe(true);
    }
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
  });

  it('books the buyer’s payment of the price and a day’s remittance to the buyer, each once', async () => {
    const path = `/assignments/${batch.id}`;
    const price = { amount: batch.price, paid_at: clock.now().toISOString(), reference: 'TED-1' };
    const wrong = await post(`${path}/price-payment`, { ...price, amount: batch.price - 1 });
    expect(wrong.status).toBe(422);
    expect((await problemOf(wrong)).errors).toMatchObject([
      { path: 'body.amount', code: 'not_the_price' },
    ]);
    const early = await post(`${path}/price-payment`, {
      ...price,
      paid_at: `${addDays(today, -1)}T12:00:00-03:00`,
    });
    expect((await problemOf(early)).errors).toMatchObject([
      { path: 'body.paid_at', code: 'out_of_range' },
    ]);
    type Paid = AssignmentBody & { price_payment: { amount: number; reference: string } | null };
    expect((await json<Paid>(ops(path))).price_payment).toBeNull();
    const paid = await json<Paid>(post(`${path}/price-payment`, price));
    expect(paid.price_payment).toMatchObject({ amount: batch.price, reference: 'TED-1' });
    // Again: the first answered, nothing recorded; under another reference: refused.
    expect(await json<Paid>(post(`${path}/price-payment`, price))).toEqual(paid);
    const other = await post(`${path}/price-payment`, { ...price, reference: 'TED-2' });
    expect(other.status).toBe(409);
    expect((await problemOf(other)).code).toBe('assignment_price_received');

    // A day is remitted once it is over, exactly its report's total, once.
    const pay = (date: string, reference: string) =>
      post(`${path}/remittances/${date}/payment`, { reference }, maker.token);
    const open = await pay(today, 'PIX-1');
    expect(open.status).toBe(409);
    expect((await problemOf(open)).code).toBe('remittance_day_open');
    clock.advance(86_400_000);
    const none = await pay(addDays(today, -1), 'PIX-0');
    expect((await problemOf(none)).code).toBe('nothing_to_remit');
    const bad = await pay(today, ' x');
    expect((await problemOf(bad)).errors).toMatchObject([
      { path: 'body.reference', code: 'invalid_format' },
    ]);
    type Report = { total: number; payment: { amount: number; reference: string } | null };
    const remitted = await json<Report>(pay(today, 'PIX-1'));
    expect(remitted).toMatchObject({
      total: dayTotal,
      payment: { amount: dayTotal, reference: 'PIX-1', paid_by: maker.operator.id },
    });
    expect(await json<Report>(pay(today, 'PIX-1'))).toEqual(remitted);
    expect((await problemOf(await pay(today, 'PIX-2'))).code).toBe('remittance_paid');
    expect(await json<Report>(ops(`${path}/remittances?date=${today}`))).toEqual(remitted);
    for (const operation of ['receiveAssignmentPrice', 'payAssignmentRemittance']) {
      const audit = await json<{ data: unknown[] }>(
        ops(`/audit?operation_id=${operation}&limit=100`, staff().admins[0].token),
      );
      expect(audit.data.some((row) => JSON.stringify(row).includes(batch.id))).toBe(true);
    }
    // The batch's receivable is 0, what it owed the buyer paid: the ledger's checks hold.
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
  });

  it('the SCR 3040 reports the sale in its month, and the loan no more after', async () => {
    const month = today.slice(0, 7);
    const next = addDays(`${month}-28`, 8).slice(0, 7);
    clock.advance((daysBetween(today, `${next}-01`) + 1) * 86_400_000);
    const file = await (
      await ops(`/regulatory/scr3040?data_base=${month}`, staff().admins[0].token)
    ).text();
    expect(await scr3040SchemaErrors(file)).toEqual([]);
    const op = new RegExp(`<Op [^>]*Contrt="${sold.id}"[^>]*>[\\s\\S]*?</Op>`).exec(file)?.[0];
    expect(op).toContain('NatuOp="01"');
    expect(op).toMatch(new RegExp(`<Inf Tp="0102" Cd="${today}" Ident="11222333" Perc="0`));
    expect(file).not.toContain(withdrawn.id); // withdrawn: it owes nothing
    clock.advance(31 * 86_400_000);
    const after = await (
      await ops(`/regulatory/scr3040?data_base=${next}`, staff().admins[0].token)
    ).text();
    expect(after).not.toContain(sold.id);
  });
});
