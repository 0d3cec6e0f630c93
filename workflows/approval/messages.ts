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
}

/** What the approval came to: the command ran (`approved`), was refused (`failed`), or neither. */
export type ApprovalStatus = 'approved' | 'failed' | 'rejected' | 'expired';

/** A second operator decides, once; the maker's own decision is refused. */
export const decideUpdate = defineUpdate<{ status: ApprovalStatus }, [Decision]>('decide');
export const statusQuery = defineQuery<ApprovalStatus | 'pending'>('status');
