import type { RouterContext } from '@koa/router';
import type { Logger } from '../logger.js';

/** What every request carries through the middleware chain. */
export interface AppState {
  requestId: string;
  log: Logger;
}

export type AppContext = RouterContext<AppState>;
