import {
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { historyFull } from '../history.js';
import { databaseWrite } from '../presets.js';
import {
  clockSettledSignal,
  type ClockAdvanceInput,
  type ClockAdvanceOutcome,
} from './messages.js';

const { tellWaitingWorkflows, markClockReady } = proxyActivities<Activities>(databaseWrite);

/**
 * How long a round waits for answers before asking again (a workflow that ended as the message
 * arrived never answers; the next round no longer lists it).
 */
const ANSWER_WAIT = '30 seconds';
/** How soon to look again for a workflow whose start is still in the outbox. */
const START_WAIT = '1 second';

/**
 * One advance of a sandbox customer's clock (`sandbox-clock/{cust_id}/{generation}`), started
 * through the outbox by the request that wrote it. Round after round it tells every workflow
 * waiting on the customer's behalf the new offset and waits for all of them to answer: each
 * fires what fell due, then answers, busy if it did anything. What one workflow did can give
 * another work (a cancelled loan releases its offer; a review makes the customer active and
 * starts its credit offers), so the advance is over only after a round in which every workflow
 * answered idle and none was still starting. Then the clock reads `ready`, unless a later
 * advance took over.
 */
export async function sandboxClockWorkflow(input: ClockAdvanceInput): Promise<ClockAdvanceOutcome> {
  const answers = new Map<string, { round: number; busy: boolean }>();
  setHandler(clockSettledSignal, ({ workflowId, offsetMs, round, busy }) => {
    if (offsetMs >= input.offsetMs) answers.set(workflowId, { round, busy });
  });
  const aheadBy = `${(input.offsetMs / 86_400_000).toFixed(2)} days`;
  const { workflowId } = workflowInfo();
  // Runs started before this release looped in one history for as long as a waiter stayed silent.
  const bounded = patched('clock-rounds-continue-as-new');

  for (let round = input.round ?? 1; ; round++) {
    // A waiter that never answers (or a start stuck in the outbox) keeps the advance going round
    // after round: each history stays bounded, the next run asking from the same round on.
    if (bounded && historyFull(input.historyLimit)) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof sandboxClockWorkflow>({ ...input, round });
    }
    const { told, starting } = await tellWaitingWorkflows({
      customerId: input.customerId,
      offsetMs: input.offsetMs,
      advance: workflowId,
      round,
    });
    setCurrentDetails(
      `**Advancing** ${input.customerId} to ${aheadBy} ahead (generation ${input.generation}), round ${round}: waiting for ${told.join(', ') || 'nobody'}${starting > 0 ? `; ${starting} not started yet` : ''}`,
    );
    const answered = (id: string) => answers.get(id)?.round === round;
    const allAnswered = await condition(() => told.every(answered), ANSWER_WAIT);
    if (starting > 0) await sleep(START_WAIT);
    else if (allAnswered && told.every((id) => answers.get(id)?.busy === false)) break;
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
