import { defineSignal } from '@temporalio/workflow';
import type { Environment } from '../../src/domain/environments.js';

/**
 * The sandbox clock's messages (contract §12). A sandbox customer's clock is real time plus an
 * offset that only grows. Each advance has its workflow (`sandbox-clock/{cust_id}/{generation}`),
 * which tells every workflow waiting on the customer's behalf of the new offset, round after
 * round (`clockAdvanced`); each one fires what has fallen due, in order, and answers
 * `clockSettled` once it waits for nothing already due, saying whether it did anything since its
 * last answer. A round in which all answer idle ends the advance: the clock reads `ready`.
 */

/** What a waiting workflow keeps of the clock, and carries across continue-as-new. */
export interface ClockState {
  /** Milliseconds the customer's clock is ahead of real time (0 in production). */
  offsetMs: number;
  /** The advances' rounds told to this workflow and not answered yet. */
  replyTo: ClockRound[];
  /** Whether the workflow has done anything (a wait ended) since its last answer. */
  busy: boolean;
}

export const noClock: ClockState = { offsetMs: 0, replyTo: [], busy: false };

/**
 * The clock of a workflow started after the customer's clock was moved `offsetMs` ahead (busy: a
 * workflow that has just started has work to do before it first answers).
 */
export const clockAt = (offsetMs: number): ClockState => ({ offsetMs, replyTo: [], busy: true });

/** One round of an advance: the advance's workflow id and the round's number. */
export interface ClockRound {
  advance: string;
  round: number;
}

/** To a waiting workflow: the customer's clock now runs `offsetMs` ahead; answer this round. */
export const clockAdvancedSignal =
  defineSignal<[ClockRound & { offsetMs: number }]>('clockAdvanced');

/**
 * To an advance's workflow: `workflowId` has fired everything due at `offsetMs` and waits for
 * nothing already due; `busy` if it did anything since its last answer (a consequence of that may
 * be waiting in another workflow, so the advance asks everyone once more).
 */
export const clockSettledSignal =
  defineSignal<[{ workflowId: string; offsetMs: number; round: number; busy: boolean }]>(
    'clockSettled',
  );

/** One advance of a customer's clock, written by `POST /v3/sandbox/customers/{id}/clock`. */
export interface ClockAdvanceInput {
  customerId: string;
  partnerId: string;
  environment: Environment;
  /** The new offset from real time, in milliseconds. */
  offsetMs: number;
  /** The clock row's generation this advance wrote: only the latest one marks the clock ready. */
  generation: number;
  /** The round a continued run starts from (1 for the advance's first run). */
  round?: number;
  /** Events before a run continues as new (tests lower it; see workflows/history.ts). */
  historyLimit?: number;
}

export type ClockAdvanceOutcome = 'ready' | 'superseded';
