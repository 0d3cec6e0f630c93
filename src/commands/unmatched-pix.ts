/**
 * A Pix no charge claimed (contract §14), in `unidentified_receipts` since it arrived: ops book it
 * on the loan it was meant for, or return it to its payer. Both move money by hand, so both wait
 * for a second operator (dual control: the route holds them, `runPixCommand` runs them once
 * approved); each is checked when asked and again under the Pix's lock when it runs.
 */
import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import {
  findReceivedPix,
  lockReceivedPix,
  markPixReturned,
  matchReceivedPix,
  type ReceivedPix,
} from '../db/queries/charges.js';
import { postReceiptEntries } from '../db/queries/ledger.js';
import { findLoanForOps, type LoanView } from '../db/queries/loans.js';
import { findReceiptTransaction, insertReceiptTransaction } from '../db/queries/receipts.js';
import type { PixApproval } from '../db/queries/approvals.js';
import { newId } from '../domain/ids.js';
import { refundEntries, returnedReceiptEntries } from '../domain/ledger/postings.js';
import type { Actors } from '../domain/operators.js';
import { ProblemError, problems } from '../errors.js';
import type { Logger } from '../logger.js';
import { dispatchWorkflowStart, enqueueWorkflowStart } from '../temporal/outbox.js';
import { loanNotFound } from './loan-deps.js';
import { pixStart } from './receive-pix.js';

export interface UnmatchedPixDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
  taskQueue: string;
  clock: () => Date;
}

export const pixNotFound = (endToEndId: string) =>
  problems.notFound('pix_not_found', `No Pix received with end-to-end id ${endToEndId}.`);

/** Why `pix` cannot be booked on `loan`, if it cannot (a 4xx problem). */
function matchRefusal(
  endToEndId: string,
  pix: ReceivedPix | undefined,
  loanId: string,
  loan: LoanView | undefined,
): ProblemError | null {
  if (!pix) return pixNotFound(endToEndId);
  if (pix.status !== 'unmatched')
    return new ProblemError('invalid_state', `The Pix is ${pix.status}, not unmatched.`);
  if (!loan) return loanNotFound(loanId);
  // The PSP's money is production's, and a loan that never took any owes nothing to pay.
  const refusal =
    loan.environment !== 'production'
      ? 'A Pix the PSP received is production money: match it to a production loan.'
      : !loan.disbursedAt
        ? `The loan is ${loan.status} and never took money: nothing it owes for the Pix to pay.`
        : null;
  return refusal
    ? problems.validation([
        { path: 'body.loan_id', code: 'not_a_production_loan', message: refusal },
      ])
    : null;
}

/** What a match is checked against when asked (and again under the Pix's lock when it runs). */
export async function checkPixMatch(
  deps: Pick<UnmatchedPixDeps, 'db'>,
  endToEndId: string,
  loanId: string,
): Promise<void> {
  const pix = await findReceivedPix(deps.db, endToEndId);
  const refusal = matchRefusal(endToEndId, pix, loanId, await findLoanForOps(deps.db, loanId));
  if (refusal) throw refusal;
}

/** What a return is checked against when asked: the Pix, unmatched. */
export async function checkPixReturn(
  deps: Pick<UnmatchedPixDeps, 'db'>,
  endToEndId: string,
): Promise<void> {
  const pix = await findReceivedPix(deps.db, endToEndId);
  if (!pix) throw pixNotFound(endToEndId);
  if (pix.status !== 'unmatched')
    throw new ProblemError('invalid_state', `The Pix is ${pix.status}, not unmatched.`);
}

/**
 * Books an unmatched Pix on its loan: the Pix names the loan (with who matched it and who
 * approved), and its `pix/{e2e}` workflow starts in the same transaction (the outbox) to book it
 * there as any Pix — a payment of §13, the rest due back — drawing on `unidentified_receipts`.
 * Matched to that loan already (a retry): the Pix as it is.
 */
export async function matchPix(
  deps: UnmatchedPixDeps,
  endToEndId: string,
  loanId: string,
  actors: Actors,
): Promise<ReceivedPix> {
  const loan = await findLoanForOps(deps.db, loanId);
  const { pix, start } = await deps.db.transaction(async (tx) => {
    const locked = await lockReceivedPix(tx, endToEndId);
    if (locked?.loanId === loanId && locked.matchedBy) return { pix: locked, start: null };
    const refusal = matchRefusal(endToEndId, locked, loanId, loan);
    if (refusal) throw refusal;
    const pix = await matchReceivedPix(tx, endToEndId, {
      loanId,
      partnerId: loan!.partnerId,
      environment: loan!.environment,
      matchedBy: actors.actor ?? null,
      matchApprovedBy: actors.approvedBy ?? null,
    });
    return { pix, start: await enqueueWorkflowStart(tx, pixStart(pix, deps.taskQueue)) };
  });
  if (start) await dispatchWorkflowStart(deps, start);
  return pix;
}

/**
 * An unmatched Pix went back to its payer by a devolução ops made, named `reference`: what it
 * brought is owed back (Dr `unidentified_receipts`, Cr `refunds_payable`, `returned`) and sent
 * (Dr `refunds_payable`, Cr `disbursement_clearing`, `refund_sent`), in one transaction. Returned
 * under that reference already (a retry): the Pix as it is; under another, 409.
 */
export async function returnPix(
  deps: UnmatchedPixDeps,
  endToEndId: string,
  reference: string,
  actors: Actors,
): Promise<ReceivedPix> {
  return deps.db.transaction(async (tx) => {
    const pix = await lockReceivedPix(tx, endToEndId);
    if (!pix) throw pixNotFound(endToEndId);
    if (pix.status === 'returned') {
      const sent = await findReceiptTransaction(tx, endToEndId, 'refund_sent');
      if (sent?.reference === reference) return pix;
      throw new ProblemError(
        'invalid_state',
        `The Pix was returned already, by devolução ${sent?.reference}.`,
      );
    }
    if (pix.status !== 'unmatched')
      throw new ProblemError('invalid_state', `The Pix is ${pix.status}, not unmatched.`);
    const now = deps.clock();
    const movements = [
      { type: 'returned' as const, entries: returnedReceiptEntries(pix.amount) },
      { type: 'refund_sent' as const, entries: refundEntries(pix.amount) },
    ];
    for (const { type, entries } of movements) {
      const receipt = await insertReceiptTransaction(tx, {
        id: newId('txn'),
        endToEndId,
        environment: 'production',
        type,
        amount: pix.amount,
        reference,
        actor: actors.actor ?? null,
        approvedBy: actors.approvedBy ?? null,
        occurredAt: now,
      });
      if (!receipt) throw new Error(`Pix ${endToEndId} returned concurrently`);
      await postReceiptEntries(tx, receipt, entries);
    }
    return markPixReturned(tx, endToEndId);
  });
}

/** Runs an approved `pix_match` or `pix_return` (the approval's workflow, through its activity). */
export async function runPixCommand(deps: UnmatchedPixDeps, approval: PixApproval): Promise<void> {
  const actors: Actors = {
    actor: { type: 'operator', id: approval.makerId },
    ...(approval.checkerId ? { approvedBy: { type: 'operator', id: approval.checkerId } } : {}),
  };
  const { request } = approval;
  if (approval.kind === 'pix_match')
    await matchPix(deps, approval.endToEndId, String(request.loan_id), actors);
  else await returnPix(deps, approval.endToEndId, String(request.reference), actors);
}
