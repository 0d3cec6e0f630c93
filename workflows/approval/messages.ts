import { defineQuery, defineUpdate } from '@temporalio/workflow';

/** The contract of an approval's workflow (`approval/{apr_id}`): its input and messages. */
export interface ApprovalInput {
  approvalId: string;
  /** The operator who asked: never the one who approves. */
  makerId: string;
  /** Epoch ms: past it, a pending approval expires. */
  expiresAt: number;
}

export interface Decision {
  decision: 'approve' | 'reject';
  checkerId: string;
  reason?: string | null;
  /**
   * The API's proof that it took this decision (src/domain/approvals/decision-proof.ts): an HMAC
   * over the approval, the decision and the checker under keys Temporal never sees. A decision
   * without a valid one is refused and audited, and nothing of it runs. Absent from decisions
   * recorded before it existed.
   */
  proof?: string | null;
}

/** What the approval came to: the command ran (`approved`), was refused (`failed`), or neither. */
export type ApprovalStatus = 'approved' | 'failed' | 'rejected' | 'expired';

/**
 * A second operator decides, once, through the API (its proof); the maker's own decision is
 * refused, and so is one the API did not make (`decision_unproven`).
 */
export const decideUpdate = defineUpdate<{ status: ApprovalStatus }, [Decision]>('decide');
export const statusQuery = defineQuery<ApprovalStatus | 'pending'>('status');
