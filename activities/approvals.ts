import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { runApprovedCommand } from '../src/commands/approvals.js';
import { closeApproval, findApproval, markExecuting } from '../src/db/queries/approvals.js';
import { recordAudit } from '../src/db/queries/operators.js';
import { verifyDecision, type DecisionClaim } from '../src/domain/approvals/decision-proof.js';
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
    mailer: deps.approvals.mailer,
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

    /**
     * Whether the API made this decision (its proof holds): checked before anything of it runs.
     * One it did not make — sent to Temporal by whoever reached the frontend — is audited
     * (`approvalDecisionRefused`, actor `system`/`temporal`, the checker it claimed in `detail`)
     * and logged, and the workflow refuses it.
     */
    async verifyDecision(input: DecisionClaim & { proof: string | null }): Promise<boolean> {
      const claim = {
        approvalId: input.approvalId,
        decision: input.decision,
        checkerId: input.checkerId,
      };
      const verdict = verifyDecision(deps.approvals.decisionKeys, claim, input.proof);
      if (verdict === 'proven') return true;
      const { workflowExecution, activityId } = Context.current().info;
      const workflowId = workflowExecution?.workflowId ?? 'unknown';
      const at = `${workflowId}/${workflowExecution?.runId ?? ''}/${activityId}`;
      const detail = {
        approval_id: input.approvalId,
        decision: input.decision,
        claimed_checker_id: input.checkerId,
        proof: verdict,
      };
      deps.logger.error(
        { ...detail, workflowId },
        'approval decision refused: the API did not make it',
      );
      await recordAudit(deps.db, {
        // One row however often this activity is retried.
        id: `aud_${createHash('sha256').update(at).digest('hex').slice(0, 32)}`,
        actor: { type: 'system', id: 'temporal' },
        operationId: 'approvalDecisionRefused',
        method: 'UPDATE',
        path: workflowId,
        requestId: at,
        status: 403,
        problemCode: 'decision_unproven',
        detail,
        at: new Date(),
      });
      return false;
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
