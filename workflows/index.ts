export { smokeCheckWorkflow } from './smoke-check.js';
