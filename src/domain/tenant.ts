import type { Environment } from './environments.js';

/** Whose data a request may see: every partner query is filtered by both. */
export interface Tenant {
  partnerId: string;
  environment: Environment;
}
