/**
 * Contract §17 at the release of a loan that refinances others (docs/refinancing.md): one database
 * transaction under every loan's lock checks each old loan again, and either refuses (nothing
 * written: the loan's workflow cancels it, `refinanced_loan_changed`) or writes the new loan's
 * disbursement — only the new money to `disbursement_clearing`, the payoffs to
 * `refinancing_clearing` — and each old loan's `refinancing` transaction drawing on that account,
 * its rows paid, `finished` with `finished_reason: "refinanced"` and `loan.finished`. All of it
 * or none: a release never pays off one loan of several, and no payment can reach an old loan
 * between its payoff and the new loan's release. The old loans' workflows then hear of it
 * (`finishRefinanced`). A loan that refinances nothing is released as it always was.
 */
import { ApplicationFailure } from '@temporalio/common';
import { updateCreditOffer } from '../src/db/queries/credit-offers.js';
import {
  changeLoanRow,
  findLoan,
  insertLoanTransaction,
  loanTransactionAmount,
  lockAndReadLoan,
  repaymentOf,
  repaymentTerms,
  type LoanView,
} from '../src/db/queries/loans.js';
import { postEntries } from '../src/db/queries/ledger.js';
import {
  liveAgreementsOf,
  refinancedBy,
  refinancingsOf,
  settleRefinancings,
  type LoanRefinancing,
} from '../src/db/queries/refinancings.js';
import { businessDate } from '../src/domain/business-date.js';
import { newId } from '../src/domain/ids.js';
import {
  bookedFor,
  paymentEntries,
  refinancingDisbursementEntries,
} from '../src/domain/ledger/postings.js';
import { allocatePayment, payoffAmount } from '../src/domain/loans/allocation.js';
import { ledgerStep, loanEventTypes } from '../src/domain/loans/loans.js';
import { refinancedLoanChanged } from '../src/domain/loans/refinancing.js';
import type { Actors } from '../src/domain/operators.js';
import type { Tenant } from '../src/domain/tenant.js';
import { presentLoan } from '../src/presenters/loans.js';
import { remindersStart } from '../src/temporal/reminder-workflows.js';
import { workflowIds } from '../src/temporal/workflow-ids.js';
import type { NewEvent } from '../src/webhooks/fan-out.js';
import { finishRefinancedUpdate } from '../workflows/loan/refinancing-messages.js';
import type { ActivityDeps } from './index.js';
import { createLoanActivities, insertDisbursement } from './loans.js';
import { writeWithEvents } from './write-with-events.js';

/** What a release did: the loans it paid off (and the offer it took over), or why it refused. */
export type Release =
  | {
      released: true;
      refinanced: { loanId: string; payoffAmount: number }[];
      /** The offer the refinanced loan had accepted, the new loan's from now. */
      offer?: { offerId: string; fromLoanId: string };
    }
  | { released: false; changed: string };

const refinancedOf = (rows: readonly LoanRefinancing[]) =>
  rows.map((row) => ({ loanId: row.refinancedLoanId, payoffAmount: row.payoffAmount }));

/**
 * Why the release on `date` of a loan that refinances `rows` is refused, each old loan read under
 * its lock (in id order, after the new loan's): released on another day than priced, or an old
 * loan no longer `active` or owing another payoff than its contract covers.
 */
async function changedRefinancing(
  tx: Parameters<typeof lockAndReadLoan>[0],
  tenant: Tenant,
  rows: readonly LoanRefinancing[],
  date: string,
): Promise<{ changed?: string; olds: Map<string, LoanView> }> {
  const olds = new Map<string, LoanView>();
  for (const row of [...rows].sort((a, b) => a.refinancedLoanId.localeCompare(b.refinancedLoanId)))
    olds.set(row.refinancedLoanId, (await lockAndReadLoan(tx, tenant, row.refinancedLoanId))!);
  // An agreement made on an old loan since (it renegotiates what the loan owes) stops it too.
  const agreements = await liveAgreementsOf(
    tx,
    tenant,
    rows.map((row) => row.refinancedLoanId),
  );
  for (const row of rows) {
    const agreement = agreements.get(row.refinancedLoanId);
    if (agreement)
      return {
        changed: `Loan ${row.refinancedLoanId} has a live payment agreement, ${agreement}.`,
        olds,
      };
    if (row.payoffDate !== date)
      return {
        changed: `Released on ${date}, not on ${row.payoffDate}, the date the contract prices loan ${row.refinancedLoanId}'s payoff for.`,
        olds,
      };
    const old = olds.get(row.refinancedLoanId)!;
    const changed = refinancedLoanChanged(
      { loanId: row.refinancedLoanId, payoffAmount: row.payoffAmount },
      {
        status: old.status,
        payoffAmount:
          old.status === 'active'
            ? payoffAmount(repaymentOf(old), date, repaymentTerms(old))
            : null,
      },
    );
    if (changed) return { changed, olds };
  }
  return { olds };
}

export function createRefinancingActivities(deps: ActivityDeps) {
  const loans = createLoanActivities(deps);
  const present = (loan: LoanView, asOf: string) =>
    presentLoan(loan, deps.loans.signingUrl, businessDate(new Date(asOf)));
  const event = (type: string, loan: LoanView, asOf: string, id = newId('evt')): NewEvent => ({
    id,
    type,
    data: present(loan, asOf),
    createdAt: loan.updatedAt,
  });

  return {
    /**
     * The money of loan `loanId` released at `at` (contract §13, and §17 for a refinancing). A
     * loan with no refinancing: `recordDisbursement`, as before. A refinancing: see the module.
     * A retry after the commit finds the disbursement written and answers what it did.
     */
    async releaseLoan(
      input: {
        tenant: Tenant;
        loanId: string;
        at: string;
        transactionId: string;
        eventId: string;
      } & Actors,
    ): Promise<Release> {
      const rows = await refinancingsOf(deps.db, input.tenant, input.loanId);
      if (rows.length === 0) {
        await loans.recordDisbursement(input);
        return { released: true, refinanced: [] };
      }
      return writeWithEvents<Release>(deps, input.tenant, async (tx) => {
        const before = await lockAndReadLoan(tx, input.tenant, input.loanId);
        if (!before)
          throw ApplicationFailure.nonRetryable(`loan ${input.loanId} not found`, 'loan_not_found');
        const done = await loanTransactionAmount(tx, input.loanId, ledgerStep.disbursement);
        if (done !== undefined)
          return { result: { released: true, refinanced: refinancedOf(rows) }, events: [] };
        if (before.status !== 'processing')
          throw ApplicationFailure.nonRetryable(`the loan is ${before.status}`, 'invalid_state');
        const date = businessDate(new Date(input.at));
        const { changed, olds } = await changedRefinancing(tx, input.tenant, rows, date);
        if (changed) return { result: { released: false, changed }, events: [] };

        // The new loan: only the new money leaves; the payoffs stay in the book.
        const payoffTotal = rows.reduce((sum, row) => sum + row.payoffAmount, 0);
        const disbursement = await insertDisbursement(tx, input.tenant, before, input);
        if (!disbursement)
          throw new Error(`loan ${input.loanId}'s disbursement written concurrently`);
        await postEntries(
          tx,
          input.tenant,
          disbursement,
          refinancingDisbursementEntries(before.figures, payoffTotal),
        );
        // Released on the day priced (checked above): no repricing.
        await changeLoanRow(tx, input.loanId, {
          status: 'active',
          disbursedAt: new Date(input.at),
          disbursementStatus: 'confirmed',
        });
        await settleRefinancings(tx, input.tenant, input.loanId, 'released');
        const events: NewEvent[] = [];

        // Each old loan: paid off from `refinancing_clearing`, finished.
        for (const row of rows) {
          const old = olds.get(row.refinancedLoanId)!;
          const allocation = allocatePayment(
            repaymentOf(old),
            { amount: row.payoffAmount, date, paidAt: input.at, applyTo: 'next' },
            repaymentTerms(old),
          );
          if (!allocation.finished)
            throw new Error(`loan ${old.id}'s payoff of ${row.payoffAmount} left rows unpaid`);
          const payoff = await insertLoanTransaction(tx, input.tenant, old.id, {
            id: newId('txn'),
            step: ledgerStep.refinanced(input.loanId),
            type: 'refinancing',
            amount: row.payoffAmount,
            principalAmount: allocation.principal,
            interestAmount: allocation.interest,
            lateFeeAmount: allocation.lateFee,
            lateInterestAmount: allocation.lateInterest,
            discountAmount: allocation.discount,
            allocation: allocation.rows,
            occurredAt: new Date(input.at),
          });
          if (!payoff) throw new Error(`loan ${old.id}'s refinancing written concurrently`);
          await postEntries(
            tx,
            input.tenant,
            payoff,
            // A sold loan's payoff (contract §19) is owed to its buyer.
            bookedFor(
              old,
              paymentEntries({
                amount: row.payoffAmount,
                principal: allocation.principal,
                interest: allocation.interest,
                lateFee: allocation.lateFee,
                lateInterest: allocation.lateInterest,
                from: 'refinancing_clearing',
              }),
            ),
          );
          await changeLoanRow(tx, old.id, {
            repayment: allocation.after,
            paidInstallments: allocation.after.rows.length,
            status: 'finished',
            finishedReason: 'refinanced',
          });
          const finished = await findLoan(tx, input.tenant, old.id);
          events.push(event(loanEventTypes.finished, finished!, input.at));
        }

        // The offer the refinanced loan had accepted goes on with the new loan.
        const fromLoanId = rows.find(
          (row) => olds.get(row.refinancedLoanId)!.creditOfferId === before.creditOfferId,
        )?.refinancedLoanId;
        if (fromLoanId)
          await updateCreditOffer(
            tx,
            input.tenant,
            before.creditOfferId,
            { loanId: input.loanId },
            { status: 'accepted', loanId: fromLoanId },
          );

        const after = await findLoan(tx, input.tenant, input.loanId);
        events.unshift({
          ...event(loanEventTypes.active, after!, input.at, input.eventId),
          actor: input.actor,
        });
        return {
          result: {
            released: true,
            refinanced: refinancedOf(rows),
            ...(fromLoanId ? { offer: { offerId: before.creditOfferId, fromLoanId } } : {}),
          },
          events,
          starts: [remindersStart(after!, deps.taskQueue)],
        };
      });
    },

    /**
     * Before a production refinancing's payout leaves (contract §16): why its release would be
     * refused on `at`'s date, or null (also for a loan that refinances nothing). Reads only.
     */
    async refinancingChanged(input: {
      tenant: Tenant;
      loanId: string;
      at: string;
    }): Promise<string | null> {
      const rows = await refinancingsOf(deps.db, input.tenant, input.loanId);
      if (rows.length === 0) return null;
      return deps.db.transaction(async (tx) => {
        const { changed } = await changedRefinancing(
          tx,
          input.tenant,
          rows,
          businessDate(new Date(input.at)),
        );
        return changed ?? null;
      });
    },

    /**
     * Tells each loan the release paid off (its workflow, `finishRefinanced`, update id
     * `refinanced:{newLoanId}`: a retry is answered by the first).
     */
    async finishRefinancedLoans(input: {
      newLoanId: string;
      refinanced: { loanId: string; payoffAmount: number }[];
    }): Promise<void> {
      for (const old of input.refinanced)
        await deps.temporal.workflow
          .getHandle(workflowIds.loan(old.loanId))
          .executeUpdate(finishRefinancedUpdate, {
            args: [{ newLoanId: input.newLoanId, payoffAmount: old.payoffAmount }],
            updateId: `refinanced:${input.newLoanId}`,
          });
    },

    /** The record agrees loan `loanId` was paid off by `newLoanId`'s release (else `invalid_state`). */
    async confirmRefinanced(input: {
      tenant: Tenant;
      loanId: string;
      newLoanId: string;
    }): Promise<{ finished: true }> {
      const loan = await findLoan(deps.db, input.tenant, input.loanId);
      const by = await refinancedBy(deps.db, input.tenant, input.loanId);
      if (
        loan?.status !== 'finished' ||
        loan.finishedReason !== 'refinanced' ||
        by !== input.newLoanId
      )
        throw ApplicationFailure.nonRetryable(
          `Loan ${input.loanId} was not paid off by loan ${input.newLoanId}.`,
          'invalid_state',
        );
      return { finished: true };
    },
  };
}
