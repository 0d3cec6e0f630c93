import { defineSignal } from '@temporalio/workflow';

/**
 * The sandbox clock's messages (contract §12). A sandbox customer's clock is real time plus an
 * offset that only grows. The customer's `sandbox-clock/{cust_id}` workflow tells every workflow
 * that waits on the customer's behalf of a new offset (`clockAdvanced`); each one fires what has
 * fallen due, in order, and answers `clockSettled` once it waits for nothing already due. (The
 * clock's workflow and its API are the rest of issue 12, not built yet: the offset stays 0.)
 */

/** What a waiting workflow keeps of the clock, and carries across continue-as-new. */
export interface ClockState {
  /** Milliseconds the customer's clock is ahead of real time (0 in production). */
  offsetMs: number;
  /** An advance told to this workflow and not answered yet. */
  unanswered: boolean;
}

export const noClock: ClockState = { offsetMs: 0, unanswered: false };

/** To a waiting workflow: the customer's clock now runs `offsetMs` ahead of real time. */
export const clockAdvancedSignal = defineSignal<[{ offsetMs: number }]>('clockAdvanced');

/** To the clock's workflow: `workflowId` has fired everything due at `offsetMs`. */
export const clockSettledSignal =
  defineSignal<[{ workflowId: string; offsetMs: number }]>('clockSettled');
