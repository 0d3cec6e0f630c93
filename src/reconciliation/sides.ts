/**
 * The sides the daily reconciliation compares besides the Pix received (contract §16), each a
 * plain function so the parts that book devolucoes and payouts plug theirs in where they land.
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client.js';
import type { DayWindow } from '../db/queries/reconciliation.js';
import type { SideItem } from '../domain/reconciliation/report.js';
import { payoutsOfDay as settledPayoutsOfDay } from '../db/queries/payouts.js';
import type { PspClient } from '../psp/client.js';
import { PspError } from '../psp/errors.js';
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
 * The devolucoes the service booked within the day: loan refunds the PSP reported `DEVOLVIDO`
 * (`devolucoes` `returned`, settled that day), and unmatched Pix ops returned to their payer
 * (`receipt_transactions` `refund_sent`, whose reference is the devolucao's id).
 */
export async function bookedDevolucoesOfDay(db: DbOrTx, day: DayWindow): Promise<DevolucaoItem[]> {
  const from = day.from.toISOString();
  const to = day.to.toISOString();
  const rows = await db.execute<{ id: string; end_to_end_id: string; amount: string }>(sql`
    select id, end_to_end_id, amount from devolucoes
    where status = 'returned' and environment = 'production'
      and settled_at >= ${from} and settled_at < ${to}
    union all
    select coalesce(reference, id) as id, end_to_end_id, amount from receipt_transactions
    where type = 'refund_sent' and environment = 'production'
      and occurred_at >= ${from} and occurred_at < ${to}`);
  return rows.map((row) => ({
    id: row.id,
    endToEndId: row.end_to_end_id,
    amount: Number(row.amount),
  }));
}

/** Payouts on both sides of the day. */
export interface PayoutSides {
  psp: SideItem[];
  booked: SideItem[];
}

/**
 * The production payouts that settled within the day (`payouts` confirmed then, returned since
 * or not: the money left that day), by our id, beside the PSP's view of each (`GET
 * /payouts/{id}` by the PSP's id; the payout port has no listing, so a payout the PSP
 * made that the service never asked for is beyond this report). The PSP's side counts a payout
 * whose money left (`confirmed` or `returned` there), at its amount.
 */
export async function payoutsOfDay(
  db: DbOrTx,
  psp: PspClient,
  day: DayWindow,
): Promise<PayoutSides> {
  const booked = (await settledPayoutsOfDay(db, 'production', day.from, day.to)).filter(
    (payout) => payout.status === 'confirmed' || payout.status === 'returned',
  );
  const atPsp: SideItem[] = [];
  for (const payout of booked) {
    const seen =
      payout.pspPayoutId === null
        ? undefined
        : await psp.getPayout(payout.pspPayoutId).catch((error: unknown) => {
            if (error instanceof PspError && error.status === 404) return undefined;
            throw error;
          });
    if (seen && (seen.status === 'confirmed' || seen.status === 'returned'))
      atPsp.push({ id: payout.id, amount: seen.amount });
  }
  return { psp: atPsp, booked: booked.map(({ id, amount }) => ({ id, amount })) };
}
