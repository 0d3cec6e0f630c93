import type { ReviewItem } from './kyc.js';

/**
 * The sandbox's automatic review, driven by magic values partners put in their test data:
 * a file name containing `reject` → that document rejected; a customer name containing `[deny]` →
 * denied at review; `[correct-email]` → a correction of the e-mail requested (once).
 */
export interface SandboxReviewInput {
  customerName: string;
  /** The submitted items to review, with the file name of each document. */
  submitted: { type: string; kind: 'document' | 'data'; fileName: string | null }[];
  /** Whether an e-mail correction was already requested for this customer. */
  emailCorrectionRequested: boolean;
}

export type SandboxReview = { deny: string } | { decisions: ReviewItem[] };

export function sandboxReview(input: SandboxReviewInput): SandboxReview {
  if (input.customerName.includes('[deny]'))
    return { deny: 'Denied at review (sandbox: name contains [deny]).' };
  const decisions: ReviewItem[] = input.submitted.map(({ type, kind, fileName }) =>
    kind === 'document' && fileName?.toLowerCase().includes('reject')
      ? {
          type,
          decision: 'reject',
          message: 'Document rejected (sandbox: file name contains "reject").',
        }
      : { type, decision: 'approve' },
  );
  if (input.customerName.includes('[correct-email]') && !input.emailCorrectionRequested) {
    decisions.push({
      type: 'email',
      decision: 'request_correction',
      message: 'Please confirm the e-mail address (sandbox: name contains [correct-email]).',
    });
  }
  return { decisions };
}
