import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

const { recordSmokeCheckCompletion } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export interface SmokeCheckInput {
  smokeCheckId: string;
  /** A durable timer to wait on first; proves timers fire on this deployment. */
  delayMs: number;
}

/** Crosses every moving part once: a timer on the server, then an activity that writes the row. */
export async function smokeCheckWorkflow(input: SmokeCheckInput): Promise<void> {
  if (input.delayMs > 0) await sleep(input.delayMs);
  await recordSmokeCheckCompletion({ smokeCheckId: input.smokeCheckId });
}
