export * from './partners.js';
export * from './platform.js';
export * from './idempotency.js';
export * from './customers.js';
export * from './webhooks.js';
export * from './credit.js';
export * from './loans.js';
export * from './sandbox.js';
