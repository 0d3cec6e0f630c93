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
  /** What to carry across continue-as-new. */
  state(): ClockState;
}

/**
 * The one helper every wait on behalf of a customer uses (contract §12, docs/architecture.md
 * "The sandbox clock"). In production the offset stays 0 and no message ever arrives: a wait is a
 * durable timer, as before. In the sandbox, `clockAdvanced` raises the offset; a wait whose
 * deadline the clock has passed ends at once and the workflow does what was due, then waits again.
 * When it next waits for something not yet due (or ends), it answers each advance's workflow with
 * `clockSettled`, which is how an advance knows when it is `ready`.
 */
export function customerClock(customerId: string, carried: ClockState = noClock): CustomerClock {
  let offsetMs = carried.offsetMs;
  // Runs recorded before advances had workflows of their own carried no `replyTo`.
  let replyTo: string[] = [...(carried.replyTo ?? [])];
  setHandler(clockAdvancedSignal, (advance) => {
    offsetMs = Math.max(offsetMs, advance.offsetMs);
    if (!replyTo.includes(advance.replyTo)) replyTo = [...replyTo, advance.replyTo];
  });
  const unanswered = () => replyTo.length > 0;

  const now = () => Date.now() + offsetMs;

  const settled = async () => {
    if (!unanswered()) return;
    const answer = { workflowId: workflowInfo().workflowId, offsetMs };
    const advances = replyTo;
    replyTo = [];
    for (const advance of advances) {
      try {
        await getExternalWorkflowHandle(advance).signal(clockSettledSignal, answer);
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
    for (;;) {
      if (done()) return true;
      if (deadline !== null && now() >= deadline) return false;
      await settled();
      if (done()) return true;
      const seen = offsetMs;
      const woken = () => done() || offsetMs !== seen || unanswered();
      if (deadline === null) await condition(woken);
      else if (deadline > now()) await condition(woken, deadline - now());
    }
  };

  return { now, until, settled, state: () => ({ offsetMs, replyTo }) };
}
