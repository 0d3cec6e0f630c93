import { ApplicationFailure } from '@temporalio/common';
import { runApprovedCommand } from '../src/commands/approvals.js';
import { closeApproval, findApproval, markExecuting } from '../src/db/queries/approvals.js';
import { businessDate } from '../src/domain/business-date.js';
import { ProblemError } from '../src/errors.js';
import { presentLoan } from '../src/presenters/loans.js';
import type { ApprovalStatus } from '../workflows/approval/messages.js';
import type { ActivityDeps } from './index.js';

export function createApprovalActivities(deps: ActivityDeps) {
  const commandDeps = {
    db: deps.db,
    temporal: deps.temporal,
    taskQueue: deps.taskQueue,
    logger: deps.logger,
    clock: () => new Date(),
    // Approvals hold production loans only: no sandbox disbursement delay applies.
    sandboxDisbursementDelayMs: 0,
    present: (loan: Parameters<typeof presentLoan>[0]) =>
      presentLoan(loan, deps.loans.signingUrl, businessDate(new Date())),
  };

  return {
    /**
     * Runs an approved command once: the row says it is running, then how it ended. A refusal of
     * the command's rules (a 4xx problem: the loan moved on meanwhile) ends the approval `failed`;
     * anything else (the database or Temporal away) is retried, and the command is idempotent.
     */
    async executeApproval(input: {
      approvalId: string;
      checkerId: string;
    }): Promise<ApprovalStatus> {
      const approval = await findApproval(deps.db, input.approvalId);
      if (!approval)
        throw ApplicationFailure.nonRetryable(`approval ${input.approvalId} not found`);
      if (approval.status === 'approved' || approval.status === 'failed') return approval.status;
      await markExecuting(deps.db, approval.id, input.checkerId);
      try {
        await runApprovedCommand(commandDeps, { ...approval, checkerId: input.checkerId });
      } catch (error) {
        if (!(error instanceof ProblemError) || error.status >= 500) throw error;
        await closeApproval(deps.db, approval.id, {
          status: 'failed',
          checkerId: input.checkerId,
          outcome: { code: error.code, detail: error.detail },
        });
        return 'failed';
      }
      await closeApproval(deps.db, approval.id, {
        status: 'approved',
        checkerId: input.checkerId,
        outcome: null,
      });
      return 'approved';
    },

    /** A rejection or an expiry: the command never runs. */
    async closeApproval(input: {
      approvalId: string;
      status: 'rejected' | 'expired';
      checkerId: string | null;
      outcome: Record<string, unknown> | null;
    }): Promise<void> {
      await closeApproval(deps.db, input.approvalId, input);
    },
  };
}
