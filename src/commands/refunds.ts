/**
 * Money due back to a borrower leaves (contract §14): ops record each refund they send — a Pix
 * back, a transfer — under its reference. Only an ended loan has money due back, and nothing
 * writes an ended loan but what it receives, so the refund is written here, under the loan's row
 * lock, with its ledger entries and its event; no workflow waits on it.
 */
import type { Db } from '../db/client.js';
import { addRefundDue } from '../db/queries/charges.js';
import { openDevolucaoAmount } from '../db/queries/devolucoes.js';
import { postEntries } from '../db/queries/ledger.js';
import {
  findLoanForOps,
  findPaymentByReference,
  insertLoanTransaction,
  lockAndReadLoan,
  type LoanView,
} from '../db/queries/loans.js';
import { newId } from '../domain/ids.js';
import type { Actors } from '../domain/operators.js';
import { refundEntries } from '../domain/ledger/postings.js';
import { ledgerStep, loanEventTypes } from '../domain/loans/loans.js';
import { ProblemError, problems } from '../errors.js';
import { recordAndFanOut, startDeliveries } from '../webhooks/fan-out.js';
import { clockNow } from './customer-clock.js';
import type { LoanDeps } from './loan-deps.js';
import { loanNotFound } from './loan-deps.js';

export interface RefundCommand {
  /** Centavos sent back, at most what the loan has due back. */
  amount: number;
  /** The refund's identity on the loan (the returned Pix's id, say). */
  reference: string;
}

/** A refund by hand above what is due back and not on its way by devolução already: 422. */
export const aboveRefundDue = (due: number, open: number) =>
  problems.validation([
    {
      path: 'body.amount',
      code: 'above_refund_due',
      message: `The loan has ${due} centavos due back${open > 0 ? `, ${open} of them on their way back by devolução` : ''}; a refund cannot exceed ${due - open}.`,
    },
  ]);

export async function recordRefund(
  deps: Pick<LoanDeps, 'db' | 'temporal' | 'logger' | 'taskQueue' | 'clock'> & { db: Db },
  loanId: string,
  command: RefundCommand,
  present: (loan: LoanView) => Record<string, unknown>,
  actors: Actors = {},
): Promise<LoanView> {
  const found = await findLoanForOps(deps.db, loanId);
  if (!found) throw loanNotFound(loanId);
  const tenant = { partnerId: found.partnerId, environment: found.environment };
  const { after, deliveries } = await deps.db.transaction(async (tx) => {
    const loan = (await lockAndReadLoan(tx, tenant, loanId))!;
    const recorded = await findPaymentByReference(tx, loan.id, command.reference, 'manual');
    if (recorded) {
      if (recorded.type === 'refund' && recorded.amount === command.amount)
        return { after: loan, deliveries: [] };
      throw new ProblemError(
        'payment_reference_conflict',
        `Transaction ${command.reference} was recorded on this loan as a ${recorded.type} of ${recorded.amount} centavos.`,
      );
    }
    // Money on its way back by devolução (contract §16) is no longer free to send by hand.
    const open = await openDevolucaoAmount(tx, loan.id);
    if (command.amount > loan.refundDueAmount - open)
      throw aboveRefundDue(loan.refundDueAmount, open);
    // On the customer's clock, as the Pix that made it due was: a sandbox refund is never dated
    // before the money it returns arrived.
    const now = clockNow(loan, deps.clock());
    const written = await insertLoanTransaction(tx, tenant, loan.id, {
      id: newId('txn'),
      step: ledgerStep.reference(command.reference),
      reference: command.reference,
      referenceSource: 'manual',
      type: 'refund',
      amount: command.amount,
      actor: actors.actor ?? null,
      approvedBy: actors.approvedBy ?? null,
      occurredAt: now,
    });
    if (!written) throw new Error(`refund ${command.reference} written concurrently`);
    await postEntries(tx, tenant, written, refundEntries(command.amount));
    await addRefundDue(tx, loan.id, -command.amount);
    const after = (await lockAndReadLoan(tx, tenant, loan.id))!;
    const deliveries = await recordAndFanOut(
      tx,
      tenant,
      [
        {
          id: newId('evt'),
          type: loanEventTypes.refundSent,
          data: {
            ...present(after),
            refund: { amount: command.amount, reference: command.reference },
          },
          createdAt: after.updatedAt,
          actor: actors.actor,
        },
      ],
      deps.taskQueue,
    );
    return { after, deliveries };
  });
  await startDeliveries(deps, deliveries);
  return after;
}
