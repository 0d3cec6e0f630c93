/**
 * A Pix arrives (contract §14): from the PSP's notification, or the sandbox's payment of a charge
 * (the same path, so the sandbox runs the production code). Each Pix is stored under its
 * end-to-end id with the workflow that books it (`pix/{end_to_end_id}`, through the outbox) in one
 * transaction; the caller answers only after that commit. A Pix told again stores nothing and
 * starts nothing; one whose txid names no charge is stored `unmatched`, for ops.
 */
import { randomInt } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Db, DbOrTx } from '../db/client.js';
import { chargesByTxid, storeReceivedPix, type ReceivedPix } from '../db/queries/charges.js';
import { postReceiptEntries } from '../db/queries/ledger.js';
import { insertReceiptTransaction } from '../db/queries/receipts.js';
import type { Environment } from '../domain/environments.js';
import { newId } from '../domain/ids.js';
import { unidentifiedReceiptEntries } from '../domain/ledger/postings.js';
import type { Logger } from '../logger.js';
import {
  dispatchWorkflowStart,
  enqueueWorkflowStarts,
  type WorkflowStart,
} from '../temporal/outbox.js';
import { workflowIds, workflowTypes } from '../temporal/workflow-ids.js';

export interface IncomingPix {
  endToEndId: string;
  txid: string | null;
  /** Centavos. */
  amount: number;
  paidAt: Date;
}

export interface ReceivePixDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
  taskQueue: string;
}

/** The `pix/{end_to_end_id}` workflow that books a Pix naming its loan. */
export const pixStart = (pix: ReceivedPix, taskQueue: string): WorkflowStart => ({
  workflowId: workflowIds.pix(pix.endToEndId),
  workflowType: workflowTypes.pix,
  taskQueue,
  args: [{ endToEndId: pix.endToEndId }],
  searchAttributes: {
    ...(pix.partnerId ? { PartnerId: pix.partnerId } : {}),
    ...(pix.environment ? { Environment: pix.environment } : {}),
    ...(pix.loanId ? { LoanId: pix.loanId } : {}),
  },
  summary: `Pix ${pix.endToEndId} for loan ${pix.loanId}`,
});

/**
 * Stores the Pix of one notification, matching each to a charge of `environment` by txid (the
 * PSP's notifications are production's), and starts the workflows that book them. Answers the Pix
 * this call stored (a repeated one is not among them). The daily reconciliation stores the Pix the
 * notifications missed the same way, naming its date (`reconciliationDate`) on the rows it stores.
 */
export async function receivePix(
  deps: ReceivePixDeps,
  environment: Environment,
  source: 'psp' | 'sandbox',
  pixes: readonly IncomingPix[],
  options: { reconciliationDate?: string } = {},
): Promise<ReceivedPix[]> {
  const { stored, outbox } = await deps.db.transaction(async (tx) => {
    const txids = pixes.flatMap((pix) => (pix.txid ? [pix.txid] : []));
    const charges = new Map(
      (await chargesByTxid(tx, txids))
        .filter((charge) => charge.environment === environment)
        .map((charge) => [charge.txid, charge]),
    );
    const stored = await storeReceivedPix(
      tx,
      pixes.map((pix) => {
        const charge = pix.txid ? charges.get(pix.txid) : undefined;
        return {
          endToEndId: pix.endToEndId,
          source,
          status: charge ? ('received' as const) : ('unmatched' as const),
          txid: pix.txid,
          amount: pix.amount,
          paidAt: pix.paidAt,
          chargeId: charge?.id ?? null,
          loanId: charge?.loanId ?? null,
          partnerId: charge?.partnerId ?? null,
          environment: charge?.environment ?? null,
          reconciliationDate: options.reconciliationDate ?? null,
        };
      }),
    );
    for (const pix of stored.filter((row) => row.status === 'unmatched'))
      await postUnidentifiedReceipt(tx, environment, pix);
    const outbox = await enqueueWorkflowStarts(
      tx,
      stored.filter((pix) => pix.status === 'received').map((pix) => pixStart(pix, deps.taskQueue)),
    );
    return { stored, outbox };
  });
  for (const pix of stored.filter((row) => row.status === 'unmatched'))
    deps.logger.warn({ endToEndId: pix.endToEndId, txid: pix.txid }, 'Pix matches no charge');
  // Started now so the Pix is booked at once; the sweeper starts any this misses.
  await Promise.all(outbox.map((row) => dispatchWorkflowStart(deps, row)));
  return stored;
}

/**
 * A Pix no charge claims is in the lender's account all the same: its money goes to
 * `unidentified_receipts` as it arrives (dated when it was paid, never after now), until ops
 * match it to a loan or return it.
 */
async function postUnidentifiedReceipt(
  tx: DbOrTx,
  environment: Environment,
  pix: ReceivedPix,
): Promise<void> {
  const receipt = await insertReceiptTransaction(tx, {
    id: newId('txn'),
    endToEndId: pix.endToEndId,
    environment,
    type: 'received',
    amount: pix.amount,
    occurredAt: new Date(Math.min(pix.paidAt.getTime(), pix.receivedAt.getTime())),
  });
  if (receipt) await postReceiptEntries(tx, receipt, unidentifiedReceiptEntries(pix.amount));
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * An end-to-end id in the payment system's format (`E`, the payer's ISPB, `yyyyMMddHHmm` in UTC,
 * 11 characters): the sandbox's Pix come from `SANDBOX0`, which no participant's ISPB (eight digits)
 * can be — 00000000 is Banco do Brasil's.
 */
export function sandboxEndToEndId(at: Date): string {
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 12);
  const tail = Array.from({ length: 11 }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join(
    '',
  );
  return `ESANDBOX0${stamp}${tail}`;
}
