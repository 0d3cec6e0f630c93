/** The contract of a refund's workflow (`refund/{rfd_id}`, contract §16): its input. */
export interface RefundInput {
  refundId: string;
  loanId: string;
  /**
   * An automatic refund waits until then (epoch ms: REFUND_AFTER after the money became due)
   * before it looks at what is still due back; an ops refund is written already and starts at once.
   */
  notBefore?: number;
  /** The next wait before asking the PSP again (a run continued as new carries it). */
  pollMs?: number;
}

/** One devolução as the workflow tracks it. */
export interface DevolucaoStep {
  id: string;
  status: 'requested' | 'processing' | 'returned' | 'failed';
}
