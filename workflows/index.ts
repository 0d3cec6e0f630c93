export { smokeCheckWorkflow } from './smoke-check.js';
export { customerOnboardingWorkflow } from './customer-onboarding.js';
export { webhookDeliveryWorkflow } from './webhook-delivery.js';
