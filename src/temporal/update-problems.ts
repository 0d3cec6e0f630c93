import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { problems, type ProblemError } from '../errors.js';

/** How one workflow's refusals read to a partner. */
export interface UpdateRefusals {
  /** The workflow, as the 503 names it (`The loan’s workflow`). */
  workflow: string;
  /** A closed workflow refused the update-with-start: the record has ended. */
  closed: () => ProblemError;
  /** A refusal of the workflow's rules, by its `ApplicationFailure` type. */
  byType: Record<string, (message: string) => ProblemError>;
}

/**
 * What a failed update-with-start means to the partner: the record has ended (409), the workflow
 * did not take the command in time (503, retry), or one of its rules refused it (as `byType` says).
 * Anything else is not the partner's doing and stays as it is (a 500).
 */
export function updateProblem(error: unknown, refusals: UpdateRefusals): unknown {
  if (error instanceof WorkflowExecutionAlreadyStartedError) return refusals.closed();
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError)
    return problems.serviceUnavailable(
      `${refusals.workflow} did not take the command in time; retry shortly.`,
    );
  if (error instanceof WorkflowUpdateFailedError) {
    const refused = refusalIn(error.cause, refusals.byType);
    if (refused) return refused;
  }
  return error;
}

/**
 * The first refusal down the cause chain: a workflow's own `ApplicationFailure`, or an activity's
 * wrapped in the `ActivityFailure` (or a child workflow's failure) that carried it to the Update.
 */
function refusalIn(cause: unknown, byType: UpdateRefusals['byType']): ProblemError | undefined {
  for (let current = cause, depth = 0; current instanceof Error && depth < 8; depth++) {
    if (current instanceof ApplicationFailure && current.type) {
      const refusal = byType[current.type];
      if (refusal) return refusal(current.message);
    }
    current = current.cause;
  }
  return undefined;
}
