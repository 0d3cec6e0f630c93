import { ApplicationFailure, condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { databaseWrite } from '../presets.js';
import {
  decideUpdate,
  statusQuery,
  type ApprovalInput,
  type ApprovalStatus,
  type Decision,
} from './messages.js';

/** The command runs through the loan's workflow: a longer budget, retried while Temporal is away. */
const { executeApproval } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});
const { closeApproval } = proxyActivities<Activities>(databaseWrite);

const refuse = (type: string, message: string): never => {
  throw ApplicationFailure.create({ type, message, nonRetryable: true });
};

/**
 * Dual control (contract §15): money an operator moves by hand waits here for a second operator.
 * Approved, the command runs once (its activity is retried until it lands; the command itself is
 * idempotent by its reference); rejected or past `expiresAt`, it never runs.
 */
export async function approvalWorkflow(input: ApprovalInput): Promise<ApprovalStatus> {
  let decision: Decision | undefined;
  let status: ApprovalStatus | undefined;

  const assertDecidable = (next: Decision) => {
    if (decision)
      refuse('invalid_state', `The approval was already decided (${status ?? 'running'}).`);
    if (Date.now() >= input.expiresAt) refuse('approval_expired', 'The approval has expired.');
    if (next.checkerId === input.makerId)
      refuse('approval_by_maker', 'The operator who asked cannot decide; another operator must.');
  };

  setHandler(
    decideUpdate,
    async (next) => {
      assertDecidable(next);
      decision = next;
      if (next.decision === 'reject') {
        await closeApproval({
          approvalId: input.approvalId,
          status: 'rejected',
          checkerId: next.checkerId,
          outcome: { reason: next.reason ?? null },
        });
        status = 'rejected';
      } else {
        status = await executeApproval({ approvalId: input.approvalId, checkerId: next.checkerId });
      }
      return { status };
    },
    { validator: assertDecidable },
  );
  setHandler(statusQuery, () => status ?? 'pending');

  const decided = await condition(
    () => decision !== undefined,
    Math.max(0, input.expiresAt - Date.now()),
  );
  if (!decided) {
    await closeApproval({
      approvalId: input.approvalId,
      status: 'expired',
      checkerId: null,
      outcome: null,
    });
    return 'expired';
  }
  await condition(() => status !== undefined);
  return status!;
}
