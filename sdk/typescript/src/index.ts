export {
  createClient,
  type ClientOptions,
  type EmbeddedCreditClient,
  type RequestOptions,
} from './client.js';
export { ApiError, type ProblemCode } from './errors.js';
export { PageIterator, type Page } from './pagination.js';
export { SANDBOX_CODE } from './sandbox.js';
export { backoffDelay, defaultRetryPolicy, type RetryPolicy } from './transport.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type WebhookEvent,
  type WebhookEventOf,
} from './webhooks.js';
export { listen, type ListenOptions, type Relay } from './listen.js';
export type * from './types.js';
