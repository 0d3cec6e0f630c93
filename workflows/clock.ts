import {
  condition,
  getExternalWorkflowHandle,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  clockAdvancedSignal,
  clockSettledSignal,
  noClock,
  type ClockRound,
  type ClockState,
} from './sandbox-clock/messages.js';

/** A customer's clock, as a workflow waiting on the customer's behalf sees it. */
export interface CustomerClock {
  /** Epoch milliseconds on the customer's clock: real time plus the offset. */
  now(): number;
  /**
   * Waits until `done()` holds (true) or the customer's clock reaches `deadline` (false); a null
   * deadline waits for `done()` alone. A wait ends early when the clock is advanced past its
   * deadline, so everything the workflow schedules goes through here.
   */
  until(deadline: number | null, done: () => boolean): Promise<boolean>;
  /** Answers an advance this workflow was told of: call before the workflow ends. */
  settled(): Promise<void>;
  /** What to carry across continue-as-new (the next run has work to do: it counts as busy). */
  state(): ClockState;
}

/**
 * The one helper every wait on behalf of a customer uses (contract §12, docs/architecture.md
 * "The sandbox clock"). In production the offset stays 0 and no message ever arrives: a wait is a
 * durable timer, as before. In the sandbox, `clockAdvanced` raises the offset; a wait whose
 * deadline the clock has passed ends at once and the workflow does what was due, then waits again.
 * When it next waits for something not yet due (or ends), it answers each advance's workflow with
 * `clockSettled` — busy if a wait ended since its last answer — which is how an advance knows
 * when it is `ready`.
 */
export function customerClock(customerId: string, carried: ClockState = noClock): CustomerClock {
  let offsetMs = carried.offsetMs;
  // Runs recorded before the sandbox clock existed carried neither of these.
  let replyTo: ClockRound[] = [...(carried.replyTo ?? [])];
  let busy = carried.busy ?? false;
  setHandler(clockAdvancedSignal, ({ offsetMs: to, ...round }) => {
    offsetMs = Math.max(offsetMs, to);
    replyTo = [...replyTo, round];
  });
  const unanswered = () => replyTo.length > 0;

  const now = () => Date.now() + offsetMs;

  const settled = async () => {
    if (!unanswered()) return;
    const { workflowId } = workflowInfo();
    const rounds = replyTo;
    const answer = { workflowId, offsetMs, busy };
    replyTo = [];
    busy = false;
    for (const { advance, round } of rounds) {
      try {
        await getExternalWorkflowHandle(advance).signal(clockSettledSignal, { ...answer, round });
      } catch (error) {
        // That advance is over (a later one superseded it, or it gave up): nobody to answer.
        log.warn('sandbox clock advance not answered', {
          customerId,
          advance,
          error: String(error),
        });
      }
    }
  };

  const until = async (deadline: number | null, done: () => boolean): Promise<boolean> => {
    const ended = (outcome: boolean) => {
      busy = true;
      return outcome;
    };
    for (;;) {
      if (done()) return ended(true);
      if (deadline !== null && now() >= deadline) return ended(false);
      await settled();
      if (done()) return ended(true);
      const seen = offsetMs;
      const woken = () => done() || offsetMs !== seen || unanswered();
      if (deadline === null) await condition(woken);
      else if (deadline > now()) await condition(woken, deadline - now());
    }
  };

  return { now, until, settled, state: () => ({ offsetMs, replyTo, busy: true }) };
}
