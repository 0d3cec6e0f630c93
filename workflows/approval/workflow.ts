import {
  ApplicationFailure,
  condition,
  patched,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { databaseWrite } from '../presets.js';
import { stepQueue } from '../step-queue.js';
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
const { closeApproval, verifyDecision } = proxyActivities<Activities>(databaseWrite);

/**
 * Issue 37: a decision runs only once the worker has verified the API's proof of it (an HMAC
 * under keys Temporal never sees; workflow code can hold no key, so an activity checks it).
 * Approvals recorded before it took their decisions as they came.
 */
const DECISION_PROOF = 'approval-decision-proof';

const refuse = (type: string, message: string): never => {
  throw ApplicationFailure.create({ type, message, nonRetryable: true });
};

/**
 * Dual control (contract §15): money an operator moves by hand, and staff administration, wait
 * here for a second operator. Approved, the command runs once (its activity is retried until it
 * lands; the command itself is idempotent); rejected or past `expiresAt`, it never runs. Only a
 * decision the API made counts: one sent to Temporal by anyone else is refused and audited.
 */
export async function approvalWorkflow(input: ApprovalInput): Promise<ApprovalStatus> {
  let decision: Decision | undefined;
  let status: ApprovalStatus | undefined;
  let expired = false;
  const oneAtATime = stepQueue();

  const assertDecidable = (next: Decision) => {
    if (decision)
      refuse('invalid_state', `The approval was already decided (${status ?? 'running'}).`);
    if (expired || Date.now() >= input.expiresAt)
      refuse('approval_expired', 'The approval has expired.');
    if (next.checkerId === input.makerId)
      refuse('approval_by_maker', 'The operator who asked cannot decide; another operator must.');
  };

  const decide = async (next: Decision) => {
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
  };

  setHandler(
    decideUpdate,
    async (next) => {
      if (!patched(DECISION_PROOF)) {
        assertDecidable(next);
        return decide(next);
      }
      // One decision at a time: another waits while this one's proof is checked, then meets the
      // approval as this one left it (decided, or still pending after a forgery).
      return oneAtATime(async () => {
        assertDecidable(next);
        const proven = await verifyDecision({
          approvalId: input.approvalId,
          decision: next.decision,
          checkerId: next.checkerId,
          proof: next.proof ?? null,
        });
        if (!proven)
          refuse(
            'decision_unproven',
            'The decision carries no proof that the API made it: refused and audited; nothing ran.',
          );
        assertDecidable(next); // it may have expired while its proof was checked
        return decide(next);
      });
    },
    { validator: assertDecidable },
  );
  setHandler(statusQuery, () => status ?? 'pending');

  const decided = await condition(
    () => decision !== undefined,
    Math.max(0, input.expiresAt - Date.now()),
  );
  if (!decided) {
    expired = true;
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
