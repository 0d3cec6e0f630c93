/**
 * The daily reconciliation of one business date (contract §16): the PSP's account against the
 * service's books, written as the date's report. Run by the `reconciliation` workflow's activity;
 * safe to run again at any time (a rerun replaces the report and books nothing twice).
 */
import { inArray } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import {
  clearingOfDay,
  storedPixIdsOfDay,
  storedPixOfDay,
  writeReconciliationReport,
  type DayWindow,
} from '../db/queries/reconciliation.js';
import { receivedPix } from '../db/schema/index.js';
import { addDays, startOfBusinessDate } from '../domain/business-date.js';
import {
  clearingDiscrepancies,
  movementDiscrepancies,
  pixDiscrepancies,
} from '../domain/reconciliation/discrepancies.js';
import {
  statusOf,
  totalOf,
  type Discrepancy,
  type ReconciliationStatus,
  type SideTotal,
} from '../domain/reconciliation/report.js';
import type { PspClient } from '../psp/client.js';
import { centavosOf } from '../psp/valor.js';
import type { IncomingPix } from '../commands/receive-pix.js';
import { bookedDevolucoesOfDay, payoutsOfDay, pspDevolucoesOfDay } from './sides.js';

export interface ReconcileDayDeps {
  db: Db;
  psp: PspClient;
  /**
   * Stores (and starts the booking of) Pix the notifications missed, through the notification's
   * own path (`receivePix`): exactly once by end-to-end id, whatever arrives meanwhile.
   */
  storeMissing(pixes: IncomingPix[], date: string): Promise<void>;
  /** Called between the long steps (an activity's heartbeat). */
  heartbeat?: () => void;
  /** How long to wait for the Pix it stored to be booked before reading the ledger (ms). */
  bookingWaitMs?: number;
}

export interface ReconcileDayResult {
  date: string;
  status: ReconciliationStatus;
  pix: { psp: SideTotal; booked: SideTotal };
  /** Pix this run stored because no notification had. */
  stored: number;
  discrepancies: Discrepancy[];
}

/** The business date as instants: its first millisecond in São Paulo to the next date's. */
export const dayWindow = (date: string): DayWindow => ({
  from: new Date(startOfBusinessDate(date)),
  to: new Date(startOfBusinessDate(addDays(date, 1))),
});

const STORE_SLICE = 1_000;

export async function reconcileDay(
  deps: ReconcileDayDeps,
  date: string,
): Promise<ReconcileDayResult> {
  const day = dayWindow(date);
  // The API Pix's window is inclusive at both ends.
  const listed = await deps.psp.listPix(day.from, new Date(day.to.getTime() - 1));
  deps.heartbeat?.();
  const psp = listed.map((pix) => ({
    id: pix.endToEndId,
    amount: centavosOf(pix.valor),
    pix,
  }));
  const before = await storedPixIdsOfDay(deps.db, day);
  const missing = psp.filter((item) => !before.has(item.id));
  for (let at = 0; at < missing.length; at += STORE_SLICE) {
    await deps.storeMissing(
      missing.slice(at, at + STORE_SLICE).map(({ pix, amount }) => ({
        endToEndId: pix.endToEndId,
        txid: pix.txid ?? null,
        amount,
        paidAt: new Date(pix.horario),
      })),
      date,
    );
    deps.heartbeat?.();
  }
  if (missing.length > 0)
    await waitForBookings(
      deps,
      missing.map((item) => item.id),
      deps.bookingWaitMs ?? 60_000,
    );

  // The service's side in one snapshot, so the Pix and the ledger agree with each other.
  const { stored, clearing, bookedDevolucoes } = await deps.db.transaction(
    async (tx) => ({
      stored: await storedPixOfDay(tx, day),
      clearing: await clearingOfDay(tx, day),
      bookedDevolucoes: await bookedDevolucoesOfDay(tx, day),
    }),
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
  deps.heartbeat?.();
  const pspDevolucoes = await pspDevolucoesOfDay(deps.psp, day);
  const payouts = await payoutsOfDay(deps.db, deps.psp, day);
  deps.heartbeat?.();

  const pspTotal = totalOf(psp);
  const bookedTotal = totalOf(stored);
  const discrepancies = [
    ...pixDiscrepancies(date, psp, stored),
    ...movementDiscrepancies(
      {
        notBooked: 'devolucao_not_booked',
        unknownToPsp: 'devolucao_unknown_to_psp',
        amountMismatch: 'devolucao_amount_mismatch',
      },
      pspDevolucoes,
      bookedDevolucoes,
    ),
    ...(payouts
      ? movementDiscrepancies(
          {
            notBooked: 'payout_not_booked',
            unknownToPsp: 'payout_unknown_to_psp',
            amountMismatch: 'payout_amount_mismatch',
          },
          payouts.psp,
          payouts.booked,
        )
      : []),
    ...clearingDiscrepancies(pspTotal, clearing.collectionsClearingPixDebits),
  ];
  const status = statusOf(discrepancies);
  const devolucoes = { psp: totalOf(pspDevolucoes), booked: totalOf(bookedDevolucoes) };
  const payoutTotals = payouts && { psp: totalOf(payouts.psp), booked: totalOf(payouts.booked) };
  await deps.db.transaction((tx) =>
    writeReconciliationReport(
      tx,
      date,
      status,
      {
        pspPixCount: pspTotal.count,
        pspPixAmount: pspTotal.amount,
        bookedPixCount: bookedTotal.count,
        bookedPixAmount: bookedTotal.amount,
        pspDevolucaoCount: devolucoes.psp.count,
        pspDevolucaoAmount: devolucoes.psp.amount,
        bookedDevolucaoCount: devolucoes.booked.count,
        bookedDevolucaoAmount: devolucoes.booked.amount,
        pspPayoutCount: payoutTotals?.psp.count ?? null,
        pspPayoutAmount: payoutTotals?.psp.amount ?? null,
        bookedPayoutCount: payoutTotals?.booked.count ?? null,
        bookedPayoutAmount: payoutTotals?.booked.amount ?? null,
        ...clearing,
      },
      discrepancies,
    ),
  );
  return {
    date,
    status,
    pix: { psp: pspTotal, booked: bookedTotal },
    stored: missing.length,
    discrepancies,
  };
}

/**
 * The Pix a run stored are booked by their own workflows (a loan's) within seconds: the run waits
 * for them, up to `limitMs`, so the ledger it reads holds them. One still `received` after that
 * is reported `not_booked`.
 */
async function waitForBookings(
  deps: ReconcileDayDeps,
  ids: readonly string[],
  limitMs: number,
): Promise<void> {
  const until = Date.now() + limitMs;
  for (;;) {
    let waiting = 0;
    for (let at = 0; at < ids.length; at += STORE_SLICE) {
      const rows = await deps.db
        .select({ status: receivedPix.status })
        .from(receivedPix)
        .where(inArray(receivedPix.endToEndId, ids.slice(at, at + STORE_SLICE)));
      waiting += rows.filter((row) => row.status === 'received').length;
    }
    deps.heartbeat?.();
    if (waiting === 0 || Date.now() >= until) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
