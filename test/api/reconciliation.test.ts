import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { z } from 'zod';
import { ledgerEntries, receiptTransactions } from '../../src/db/schema/index.js';
import { businessDate, addDays } from '../../src/domain/business-date.js';
import type { reconciliationSchema } from '../../src/http/routes/reconciliation/schema.js';
import { pspClientFor, type PspClient } from '../../src/psp/client.js';
import { reconciliationScheduleId } from '../../src/temporal/reconciliation-schedule.js';
import { eventually } from '../helpers/eventually.js';
import { recordHistory } from '../helpers/histories.js';
import { json } from '../helpers/partners.js';
import { endToEndId, notifyPsp, valor } from '../helpers/psp.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

type Report = z.infer<typeof reconciliationSchema>;
type Paid = { status: number; body: { pix: { endToEndId: string; horario: string } } };

/**
 * The daily reconciliation (contract §16) over the real stack: this file's own account at the
 * run's PSP simulator, whose clock the run's files share (never moved here: the days reconciled
 * are the ones the simulator's `horario`s fall on). The run's database is shared too, so the
 * service's side of a day holds other files' production Pix, which this account's PSP does not
 * list: they show as `unknown_to_psp`, and the checks below hold whatever they are.
 */
let stack: TestStack;
let psp: PspClient;

beforeAll(async () => {
  stack = await startStack();
  psp = pspClientFor(stack.config.psp!);
});
afterAll(async () => {
  psp?.close();
  await stack?.stop();
});

const desk = () => inject('staff').desk.token;
const admin = () => inject('staff').admins[0].token;
const ops = (path: string, token: string, method = 'GET') =>
  fetch(`${stack.baseUrl}/ops/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}` },
  });

/** A charge registered at the simulator for `centavos` (any txid: the service need not know it). */
async function pspCharge(txid: string, centavos: number) {
  await psp.createCob(txid, {
    calendario: { expiracao: 3600 },
    valor: { original: valor(centavos) },
    chave: stack.config.pix.key,
  });
}

/** A payer pays the charge at the PSP, its notification dropped (`notify: false`). */
async function payDropped(txid: string): Promise<{ endToEndId: string; horario: string }> {
  const paid = (await stack.psp!.control('POST', `/charges/${txid}/pay`, {
    notify: false,
  })) as Paid;
  expect(paid.status).toBe(201);
  return paid.body.pix;
}

/** Runs the reconciliation of `date` and waits for its report. */
async function reconcile(date: string): Promise<Report> {
  const started = await ops(`/reconciliation/${date}/run`, desk(), 'POST');
  expect(started.status).toBe(202);
  expect(started.headers.get('location')).toBe(`/ops/v1/reconciliation/${date}`);
  const run = (await started.json()) as { run: number; workflow_id: string; status: string };
  expect(run).toMatchObject({
    status: 'running',
    workflow_id: `reconciliation/${date}/${run.run}`,
  });
  await stack.temporal.workflow.getHandle(run.workflow_id).result();
  const report = await json<Report>(ops(`/reconciliation/${date}`, admin()));
  expect(report.status).not.toBe('running');
  return report;
}

/** The ledger entries of the receipt transactions of a Pix no charge claims. */
const receiptEntriesOf = async (id: string) =>
  stack.database.db
    .select({
      account: ledgerEntries.account,
      direction: ledgerEntries.direction,
      amount: ledgerEntries.amount,
    })
    .from(ledgerEntries)
    .innerJoin(receiptTransactions, eq(receiptTransactions.id, ledgerEntries.receiptTransactionId))
    .where(eq(receiptTransactions.endToEndId, id))
    .orderBy(ledgerEntries.id);

describe('the daily reconciliation with the PSP (contract §16)', () => {
  it('books a Pix whose notification was dropped exactly once, lists a Pix the PSP does not know and an amount that differs, and totals each side', async () => {
    // A Pix the PSP received for R$ 12.34 whose notification never came. Its txid names no charge
    // of the service (the service's static charges have 25-character txids, which the API Pix's
    // cob does not take), so once found it is stored unmatched: its money in the ledger at once
    // (`unidentified_receipts`), listed for ops.
    const droppedTxid = `recon${randomBytes(12).toString('hex')}`;
    await pspCharge(droppedTxid, 1_234);
    const dropped = await payDropped(droppedTxid);
    // A Pix the PSP received for R$ 5.00 whose notification (sent by hand: the PSP's own are
    // signed by the simulator, which never lies about an amount) says R$ 7.00.
    const otherTxid = `recon${randomBytes(12).toString('hex')}`;
    await pspCharge(otherTxid, 500);
    const differing = await payDropped(otherTxid);
    const notified = (pix: Record<string, unknown>) =>
      json(notifyPsp(stack.baseUrl, JSON.stringify({ pix: [pix] })));
    expect(
      await notified({
        endToEndId: differing.endToEndId,
        txid: otherTxid,
        valor: '7.00',
        horario: differing.horario,
      }),
    ).toEqual({ stored: 1, already_stored: 0 });
    // A Pix notified that the PSP never received (the notification path is the only way a row
    // gets in, so this is how the service comes to hold one).
    const unknown = endToEndId();
    expect(
      await notified({ endToEndId: unknown, valor: '3.21', horario: dropped.horario }),
    ).toEqual({ stored: 1, already_stored: 0 });
    const received = (id: string) => ops(`/received-pix/${id}`, admin());
    expect((await received(dropped.endToEndId)).status).toBe(404);

    const date = businessDate(new Date(dropped.horario));
    // Days are chosen by the PSP's horarios; a run that straddles midnight in São Paulo has two.
    expect(businessDate(new Date(differing.horario))).toBe(date);

    const report = await reconcile(date);
    expect(report.status).toBe('discrepancies');
    // The PSP's side is this account's: the two Pix paid at the simulator.
    expect(report.pix.psp).toEqual({ count: 2, amount: 1_234 + 500 });
    expect(report.discrepancies).toEqual(
      expect.arrayContaining([
        {
          kind: 'missing_notification',
          end_to_end_id: dropped.endToEndId,
          reference: null,
          psp_amount: 1_234,
          booked_amount: 1_234,
          action: 'booked_missing_notification',
        },
        {
          kind: 'amount_mismatch',
          end_to_end_id: differing.endToEndId,
          reference: null,
          psp_amount: 500,
          booked_amount: 700,
          action: 'none',
        },
        {
          kind: 'unknown_to_psp',
          end_to_end_id: unknown,
          reference: null,
          psp_amount: null,
          booked_amount: 321,
          action: 'none',
        },
      ]),
    );
    // The service's side: every Pix the PSP listed (now stored), plus what only the service holds
    // (this file's unknown one, other files' Pix), with the differing amounts as booked.
    const of = (kind: string) => report.discrepancies.filter((d) => d.kind === kind);
    const unknownToPsp = of('unknown_to_psp');
    expect(report.has_more_discrepancies).toBe(false);
    expect(report.discrepancy_counts.unknown_to_psp).toBe(unknownToPsp.length);
    expect(report.pix.booked).toEqual({
      count: report.pix.psp!.count + unknownToPsp.length,
      amount:
        report.pix.psp!.amount +
        unknownToPsp.reduce((sum, d) => sum + d.booked_amount!, 0) +
        of('amount_mismatch').reduce((sum, d) => sum + d.booked_amount! - d.psp_amount!, 0),
    });
    expect(report.clearing.collections_clearing.psp_received).toBe(report.pix.psp!.amount);
    expect(report.clearing.collections_clearing.pix_debits).toBeGreaterThanOrEqual(
      1_234 + 700 + 321,
    );
    // No devolucao on this account: the PSP's side is empty (the booked side is every file's).
    expect(report.devolucoes.psp).toEqual({ count: 0, amount: 0 });
    expect(report.devolucoes.booked).not.toBeNull();
    // No payout on this account either: the PSP's side is empty, every other file's payout settled
    // today (the booked side) unknown to this account.
    expect(report.payouts!.psp).toEqual({ count: 0, amount: 0 });
    expect(of('payout_unknown_to_psp')).toHaveLength(report.payouts!.booked!.count);

    // Stored once, as the notification would have, and in the ledger once.
    expect(await json(received(dropped.endToEndId))).toMatchObject({
      status: 'unmatched',
      amount: 1_234,
      paid_at: dropped.horario,
    });
    const entries = () => receiptEntriesOf(dropped.endToEndId);
    expect(await entries()).toEqual([
      { account: 'collections_clearing', direction: 'debit', amount: 1_234 },
      { account: 'unidentified_receipts', direction: 'credit', amount: 1_234 },
    ]);

    // A rerun books nothing more and says the same of the dropped notification.
    const again = await reconcile(date);
    expect(again.runs).toBe(report.runs + 1);
    expect(again.pix.psp).toEqual(report.pix.psp);
    expect(again.discrepancies).toContainEqual(
      expect.objectContaining({
        kind: 'missing_notification',
        end_to_end_id: dropped.endToEndId,
        action: 'booked_missing_notification',
      }),
    );
    // The notification arrives late after all: already stored, nothing booked.
    const late = (await stack.psp!.control('POST', `/pix/${dropped.endToEndId}/notify`)) as {
      body: { notified: unknown };
    };
    expect(late.body.notified).toBe(200);
    expect(await entries()).toHaveLength(2);

    // /metrics counts the latest report's discrepancies by kind.
    const metrics = await (
      await fetch(`${stack.baseUrl}/metrics`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } })
    ).text();
    const gauge = (kind: string) =>
      Number(
        new RegExp(`^reconciliation_discrepancies\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(
          metrics,
        )?.[1],
      );
    expect(gauge('amount_mismatch')).toBeGreaterThanOrEqual(1);
    expect(gauge('missing_notification')).toBeGreaterThanOrEqual(1);
    expect(metrics).toMatch(/^reconciliation_last_date_timestamp_seconds \d+/m);

    await recordHistory(
      stack.temporal.workflow.getHandle(`reconciliation/${date}/${again.runs}`),
      'reconciliation',
      'ops-run-with-discrepancies',
    );
  });

  it('answers 404 for a day never run, 422 for a path that is not a day to reconcile, and runs for the payments desk only', async () => {
    const never = await ops('/reconciliation/2020-11-03', admin());
    expect(never.status).toBe(404);
    expect(await never.json()).toMatchObject({ code: 'reconciliation_not_found' });
    const tomorrow = addDays(businessDate(new Date()), 2);
    for (const [date, code] of [
      ['2026-02-30', 'invalid_format'],
      ['yesterday', 'invalid_format'],
      ['2020-11-02', 'out_of_range'],
      [tomorrow, 'out_of_range'],
    ] as const) {
      for (const [path, method, token] of [
        [`/reconciliation/${date}`, 'GET', admin()],
        [`/reconciliation/${date}/run`, 'POST', desk()],
      ] as const) {
        const answer = await ops(path, token, method);
        expect(answer.status, `${method} ${path}`).toBe(422);
        expect(await answer.json()).toMatchObject({ errors: [{ path: 'path.date', code }] });
      }
    }
    // An administrator is no payments desk: running one moves money (a missed Pix is booked).
    const refused = await ops(`/reconciliation/${businessDate(new Date())}/run`, admin(), 'POST');
    expect(refused.status).toBe(403);
  });

  it('is scheduled daily after midnight in São Paulo, and the schedule’s run reconciles the day before', async () => {
    const schedule = stack.temporal.schedule.getHandle(
      reconciliationScheduleId(stack.config.temporal.taskQueue),
    );
    const described = await schedule.describe();
    expect(described.spec.timezone).toBe('America/Sao_Paulo');
    expect(described.spec.calendars).toEqual([
      expect.objectContaining({
        hour: [{ start: 0, end: 0, step: 1 }],
        minute: [{ start: 30, end: 30, step: 1 }],
      }),
    ]);
    expect(described.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'reconciliationWorkflow',
      taskQueue: stack.config.temporal.taskQueue,
    });
    // Fired now instead of at 00:30: it reconciles yesterday (by the workflow's clock).
    const yesterday = addDays(businessDate(new Date()), -1);
    const earlier = await ops(`/reconciliation/${yesterday}`, admin());
    const before = earlier.status === 200 ? ((await earlier.json()) as Report) : undefined;
    await schedule.trigger();
    const run = await eventually(async () => {
      const { recentActions } = (await schedule.describe()).info;
      return recentActions.at(-1)?.action.workflow.workflowId;
    }, 'the schedule’s run');
    expect(run).toMatch(/^reconciliation\/daily-/);
    await stack.temporal.workflow.getHandle(run).result();
    const report = await json<Report>(ops(`/reconciliation/${yesterday}`, admin()));
    expect(report.status).not.toBe('running');
    expect(report.runs).toBeGreaterThan(before?.runs ?? 0);
    await recordHistory(
      stack.temporal.workflow.getHandle(run),
      'reconciliation',
      'scheduled-run-of-the-day-before',
    );
  });
});
