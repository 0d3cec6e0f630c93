import type * as workflows from '../../workflows/index.js';

/** Workflow ids name the record they own, so starting one twice is harmless (REJECT_DUPLICATE). */
export const workflowIds = {
  smokeCheck: (smokeCheckId: string) => `smoke-check/${smokeCheckId}`,
  customerOnboarding: (customerId: string) => `customer-onboarding/${customerId}`,
  creditOffers: (customerId: string) => `credit-offers/${customerId}`,
  loan: (loanId: string) => `loan/${loanId}`,
  sandboxClock: (customerId: string, generation: number) =>
    `sandbox-clock/${customerId}/${generation}`,
  webhookDelivery: (deliveryId: string) => `webhook-delivery/${deliveryId}`,
  pix: (endToEndId: string) => `pix/${endToEndId}`,
  approval: (approvalId: string) => `approval/${approvalId}`,
  customerErasure: (customerId: string) => `customer-erasure/${customerId}`,
  deniedDocuments: (customerId: string) => `denied-documents/${customerId}`,
  refund: (refundId: string) => `refund/${refundId}`,
  /** Ops' run `run` of a business date (the schedule's runs are `reconciliation/daily-…`). */
  reconciliation: (date: string, run: number) => `reconciliation/${date}/${run}`,
  /** A loan's reminders (contract §17), while it is active. */
  reminders: (loanId: string) => `reminders/${loanId}`,
};

/**
 * Every workflow type, named once: the names the API and the outbox start workflows by. Checked
 * against the workflow module's exports, so a renamed workflow cannot leave a stale name behind.
 */
export const workflowTypes = {
  smokeCheck: 'smokeCheckWorkflow',
  customerOnboarding: 'customerOnboardingWorkflow',
  creditOffers: 'creditOffersWorkflow',
  loan: 'loanWorkflow',
  sandboxClock: 'sandboxClockWorkflow',
  webhookDelivery: 'webhookDeliveryWorkflow',
  pix: 'pixWorkflow',
  approval: 'approvalWorkflow',
  customerErasure: 'customerErasureWorkflow',
  deniedDocuments: 'deniedDocumentsWorkflow',
  refund: 'refundWorkflow',
  reconciliation: 'reconciliationWorkflow',
  reminders: 'remindersWorkflow',
} as const satisfies Record<keyof typeof workflowIds, keyof typeof workflows>;
