import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { databaseWrite } from '../presets.js';
import type { SmokeCheckInput } from './messages.js';

const { recordSmokeCheckCompletion } = proxyActivities<Activities>(databaseWrite);

/** Crosses every moving part once: a timer on the server, then an activity that writes the row. */
export async function smokeCheckWorkflow(input: SmokeCheckInput): Promise<void> {
  if (input.delayMs > 0) await sleep(input.delayMs);
  await recordSmokeCheckCompletion({ smokeCheckId: input.smokeCheckId });
}
