export { smokeCheckWorkflow } from './smoke-check.js';
export { customerOnboardingWorkflow } from './customer-onboarding.js';
