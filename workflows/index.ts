export { smokeCheckWorkflow } from './smoke-check/workflow.js';
export { customerOnboardingWorkflow } from './customer-onboarding/workflow.js';
export { creditOffersWorkflow } from './credit-offers/workflow.js';
export { webhookDeliveryWorkflow } from './webhook-delivery/workflow.js';
export { loanWorkflow } from './loan/workflow.js';
export { sandboxClockWorkflow } from './sandbox-clock/workflow.js';
export { pixWorkflow } from './pix/workflow.js';
export { approvalWorkflow } from './approval/workflow.js';
export { customerErasureWorkflow, deniedDocumentsWorkflow } from './customer-data/workflow.js';
