import { defineSignal } from '@temporalio/workflow';
import type { Environment } from '../../src/domain/environments.js';

/**
 * The sandbox clock's messages (contract §12). A sandbox customer's clock is real time plus an
 * offset that only grows. Each advance has its workflow (`sandbox-clock/{cust_id}/{generation}`),
 * which tells every workflow waiting on the customer's behalf of the new offset (`clockAdvanced`);
 * each one fires what has fallen due, in order, and answers `clockSettled` once it waits for
 * nothing already due. When all have answered, the clock reads `ready`.
 */

/** What a waiting workflow keeps of the clock, and carries across continue-as-new. */
export interface ClockState {
  /** Milliseconds the customer's clock is ahead of real time (0 in production). */
  offsetMs: number;
  /** The advances (their workflow ids) told to this workflow and not answered yet. */
  replyTo: string[];
}

export const noClock: ClockState = { offsetMs: 0, replyTo: [] };

/** To a waiting workflow: the customer's clock now runs `offsetMs` ahead; answer `replyTo`. */
export const clockAdvancedSignal =
  defineSignal<[{ offsetMs: number; replyTo: string }]>('clockAdvanced');

/** To an advance's workflow: `workflowId` has fired everything due at `offsetMs`. */
export const clockSettledSignal =
  defineSignal<[{ workflowId: string; offsetMs: number }]>('clockSettled');

/** One advance of a customer's clock, written by `POST /v3/sandbox/customers/{id}/clock`. */
export interface ClockAdvanceInput {
  customerId: string;
  partnerId: string;
  environment: Environment;
  /** The new offset from real time, in milliseconds. */
  offsetMs: number;
  /** The clock row's generation this advance wrote: only the latest one marks the clock ready. */
  generation: number;
}

export type ClockAdvanceOutcome = 'ready' | 'superseded';
