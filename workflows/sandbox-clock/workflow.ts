import {
  condition,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { databaseWrite } from '../presets.js';
import {
  clockSettledSignal,
  type ClockAdvanceInput,
  type ClockAdvanceOutcome,
} from './messages.js';

const { tellWaitingWorkflows, markClockReady } = proxyActivities<Activities>(databaseWrite);

/**
 * How long an advance waits for answers before telling the silent workflows again (one that
 * ended as the message arrived never answers; the next round no longer lists it).
 */
const ANSWER_WAIT = '30 seconds';
/** How soon to look again for a workflow whose start is still in the outbox. */
const START_WAIT = '1 second';

/**
 * One advance of a sandbox customer's clock (`sandbox-clock/{cust_id}/{generation}`), started
 * through the outbox by the request that wrote it. It tells every workflow waiting on the
 * customer's behalf the new offset, waits until each has fired what fell due and answered, and
 * lists them again — firing can start new ones, such as a renewed offer's run or the credit
 * offers of a customer the advance made active — until a listing finds nobody behind. Then the
 * clock reads `ready`, unless a later advance took over.
 */
export async function sandboxClockWorkflow(input: ClockAdvanceInput): Promise<ClockAdvanceOutcome> {
  const answered = new Map<string, number>();
  setHandler(clockSettledSignal, ({ workflowId, offsetMs }) => {
    answered.set(workflowId, Math.max(answered.get(workflowId) ?? -1, offsetMs));
  });
  const caughtUp = (workflowId: string) => (answered.get(workflowId) ?? -1) >= input.offsetMs;
  const aheadBy = `${(input.offsetMs / 86_400_000).toFixed(2)} days`;

  for (let round = 1; ; round++) {
    const { told, starting } = await tellWaitingWorkflows({
      customerId: input.customerId,
      offsetMs: input.offsetMs,
      replyTo: workflowInfo().workflowId,
      skip: [...answered.keys()].filter(caughtUp),
    });
    if (told.length === 0 && starting === 0) break;
    setCurrentDetails(
      `**Advancing** ${input.customerId} to ${aheadBy} ahead (generation ${input.generation}), round ${round}: waiting for ${told.join(', ') || 'nobody'}${starting > 0 ? `; ${starting} not started yet` : ''}`,
    );
    await condition(() => told.every(caughtUp), ANSWER_WAIT);
    if (starting > 0) await sleep(START_WAIT);
  }
  const ready = await markClockReady({
    customerId: input.customerId,
    generation: input.generation,
  });
  setCurrentDetails(
    ready
      ? `**Ready**: ${input.customerId}'s clock runs ${aheadBy} ahead (generation ${input.generation}).`
      : `**Superseded** by a later advance of ${input.customerId}'s clock.`,
  );
  return ready ? 'ready' : 'superseded';
}
