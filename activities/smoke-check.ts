import type { ActivityDeps } from './index.js';
import { markSmokeCheckCompleted } from '../src/db/queries/smoke-checks.js';

export function createSmokeCheckActivities(deps: ActivityDeps) {
  return {
    /** Idempotent: a retry after a lost response finds the row completed and leaves it as is. */
    async recordSmokeCheckCompletion(input: { smokeCheckId: string }): Promise<void> {
      await markSmokeCheckCompleted(deps.db, {
        id: input.smokeCheckId,
        completedBy: deps.identity,
      });
    },
  };
}
