import { ApplicationFailure } from '@temporalio/common';
import {
  changeLoanRow,
  insertLoanTransaction,
  lockAndReadLoan,
  repaymentOf,
} from '../src/db/queries/loans.js';
import { postEntries } from '../src/db/queries/ledger.js';
import { businessDate } from '../src/domain/business-date.js';
import { writeOffEntries } from '../src/domain/ledger/postings.js';
import { ledgerStep, loanEventTypes } from '../src/domain/loans/loans.js';
import { DEFAULT_WRITE_OFF_AFTER_DAYS, writeOffRow } from '../src/domain/loans/write-off.js';
import type { Tenant } from '../src/domain/tenant.js';
import { presentLoan } from '../src/presenters/loans.js';
import type { NewEvent } from '../src/webhooks/fan-out.js';
import { writeWithEvents } from './write-with-events.js';
import type { ActivityDeps } from './index.js';

/** Contract §17's write-off, for the loan workflow's timer (workflows/loan/write-off.ts). */
export function createWriteOffActivities(deps: ActivityDeps) {
  const afterDays = deps.loans.writeOffAfterDays ?? DEFAULT_WRITE_OFF_AFTER_DAYS;
  return {
    /** WRITE_OFF_AFTER_DAYS as this worker runs it: read once per run of a repaying loan. */
    // eslint-disable-next-line @typescript-eslint/require-await
    async writeOffTerms(): Promise<{ afterDays: number }> {
      return { afterDays };
    },

    /**
     * Writes the loan off at `at` (the customer's clock) if a row is shown `overdue` for more than
     * WRITE_OFF_AFTER_DAYS then: `written_off_at`, a `write_off` transaction moving the unpaid
     * principal from `loan_principal` to `credit_losses`, and `loan.written_off`, in one
     * transaction. Once per loan (its ledger step); anything else (not active, written off
     * already, no such row: paid meanwhile, or renegotiated) writes nothing and answers false.
     */
    async recordWriteOff(input: {
      tenant: Tenant;
      loanId: string;
      at: string;
      transactionId: string;
      eventId: string;
    }): Promise<{ writtenOff: boolean }> {
      return writeWithEvents<{ writtenOff: boolean }>(deps, input.tenant, async (tx) => {
        const before = await lockAndReadLoan(tx, input.tenant, input.loanId);
        if (!before)
          throw ApplicationFailure.nonRetryable(`loan ${input.loanId} not found`, 'loan_not_found');
        if (before.writtenOffAt) return { result: { writtenOff: true }, events: [] };
        const date = businessDate(new Date(input.at));
        const shown = presentLoan(before, deps.loans.signingUrl, date);
        // A sold loan (contract §19) is off the lender's book already: its losses are the buyer's.
        if (
          before.status !== 'active' ||
          before.assignmentId ||
          !writeOffRow(shown.schedule, date, afterDays)
        )
          return { result: { writtenOff: false }, events: [] };
        const principal = repaymentOf(before).principal_outstanding;
        const occurredAt = new Date(input.at);
        if (principal > 0) {
          const written = await insertLoanTransaction(tx, input.tenant, input.loanId, {
            id: input.transactionId,
            step: ledgerStep.writeOff,
            type: 'write_off',
            amount: principal,
            principalAmount: principal,
            occurredAt,
          });
          if (written) await postEntries(tx, input.tenant, written, writeOffEntries(principal));
        }
        await changeLoanRow(tx, input.loanId, { writtenOffAt: occurredAt });
        const after = (await lockAndReadLoan(tx, input.tenant, input.loanId))!;
        const event: NewEvent = {
          id: input.eventId,
          type: loanEventTypes.writtenOff,
          data: presentLoan(after, deps.loans.signingUrl, date),
          createdAt: after.updatedAt,
        };
        return { result: { writtenOff: true }, events: [event] };
      });
    },
  };
}
