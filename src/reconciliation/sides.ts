/**
 * The sides the daily reconciliation compares besides the Pix received (contract §16), each a
 * plain function so the parts that book devolucoes and payouts plug theirs in where they land.
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client.js';
import type { DayWindow } from '../db/queries/reconciliation.js';
import type { SideItem } from '../domain/reconciliation/report.js';
import type { PspClient } from '../psp/client.js';
import { centavosOf } from '../psp/valor.js';

/** How far back a devolucao's Pix may lie: the SPI takes a devolucao up to 90 days after it. */
const DEVOLUCAO_LOOKBACK_MS = 90 * 86_400_000;

/** A devolucao on either side: `id` is ours (the one `PUT /pix/{e2eid}/devolucao/{id}` names). */
export interface DevolucaoItem extends SideItem {
  endToEndId: string;
}

/**
 * The PSP's devolucoes settled (`DEVOLVIDO`) within the day: read off the Pix of the 90 days up
 * to the day's end that carry a devolucao (`devolucaoPresente=true`), by `horario.liquidacao`.
 */
export async function pspDevolucoesOfDay(psp: PspClient, day: DayWindow): Promise<DevolucaoItem[]> {
  const pix = await psp.listPix(
    new Date(day.from.getTime() - DEVOLUCAO_LOOKBACK_MS),
    new Date(day.to.getTime() - 1),
    undefined,
    { devolucaoPresente: true },
  );
  return pix.flatMap((received) =>
    (received.devolucoes ?? []).flatMap((devolucao) => {
      const settled = Date.parse(devolucao.horario.liquidacao ?? '');
      return devolucao.status === 'DEVOLVIDO' &&
        settled >= day.from.getTime() &&
        settled < day.to.getTime()
        ? [
            {
              id: devolucao.id,
              endToEndId: received.endToEndId,
              amount: centavosOf(devolucao.valor),
            },
          ]
        : [];
    }),
  );
}

/**
 * The devolucoes the service booked within the day. Today: unmatched Pix ops returned to their
 * payer (`receipt_transactions` `refund_sent`, whose reference is the devolucao's id).
 *
 * HOOK (refunds by devolucao, issue 38's refunds part): add the loan refunds booked when the PSP
 * reported them `DEVOLVIDO` (their devolucao id and the Pix's end-to-end id), in the same shape.
 */
export async function bookedDevolucoesOfDay(db: DbOrTx, day: DayWindow): Promise<DevolucaoItem[]> {
  const rows = await db.execute<{ id: string; end_to_end_id: string; amount: string }>(sql`
    select coalesce(reference, id) as id, end_to_end_id, amount from receipt_transactions
    where type = 'refund_sent' and environment = 'production'
      and occurred_at >= ${day.from.toISOString()} and occurred_at < ${day.to.toISOString()}`);
  return rows.map((row) => ({
    id: row.id,
    endToEndId: row.end_to_end_id,
    amount: Number(row.amount),
  }));
}

/** Payouts on both sides of the day, or null while the side is not wired. */
export interface PayoutSides {
  psp: SideItem[];
  booked: SideItem[];
}

/**
 * HOOK (payouts, issue 38's disbursement part): the payouts the service sent that settled within
 * the day (its `payouts` table: confirmed, by their id at the PSP, in centavos) and the PSP's
 * view of each (`GET /payouts/{id}`: the payout port has no listing). Until it is wired, the
 * report's payout figures stay null and no payout discrepancy is reported.
 */
export function payoutsOfDay(
  _db: DbOrTx,
  _psp: PspClient,
  _day: DayWindow,
): Promise<PayoutSides | null> {
  return Promise.resolve(null);
}
