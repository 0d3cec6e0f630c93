import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { ProblemError } from '../../src/errors.js';
import { toProblem as customerProblem } from '../../src/temporal/customer-workflows.js';
import { toProblem as loanProblem } from '../../src/temporal/loan-workflows.js';

/** An Update failed by a refusal thrown in the workflow itself. */
const byWorkflow = (type: string) =>
  new WorkflowUpdateFailedError(
    'Workflow Update failed',
    ApplicationFailure.nonRetryable('no', type),
  );

/** An Update failed by an activity's refusal: Temporal wraps it in an `ActivityFailure`. */
const byActivity = (type: string) =>
  new WorkflowUpdateFailedError(
    'Workflow Update failed',
    new ActivityFailure(
      'Activity task failed',
      'recordPayment',
      '3',
      RetryState.NON_RETRYABLE_FAILURE,
      'worker@host',
      ApplicationFailure.nonRetryable('no', type),
    ),
  );

const problemOf = (mapped: unknown) => {
  expect(mapped).toBeInstanceOf(ProblemError);
  const problem = mapped as ProblemError;
  return {
    status: problem.status,
    code: problem.code,
    paths: ((problem.extra.errors ?? []) as { path: string; code: string }[]).map(
      (error) => `${error.path} ${error.code}`,
    ),
  };
};

// Every refusal a loan's or a customer's workflow can answer, as the partner reads it.
const loanRefusals: [string, number, string, string[]][] = [
  ['invalid_state', 409, 'invalid_state', []],
  ['release_window_passed', 409, 'invalid_state', []],
  ['signer_not_found', 422, 'validation_error', ['body.cpf not_a_signer']],
  ['payment_amount_mismatch', 422, 'validation_error', ['body.amount not_the_amount_due']],
  ['payment_reference_conflict', 409, 'payment_reference_conflict', []],
  ['payment_above_payoff', 422, 'validation_error', ['body.amount above_payoff_amount']],
  ['before_latest_payment', 422, 'validation_error', ['body.paid_at before_latest_payment']],
  ['nothing_overdue', 422, 'validation_error', ['body.scope nothing_overdue']],
  ['above_payoff_amount', 422, 'validation_error', ['body.amount above_payoff_amount']],
  ['invalid_expires_at', 422, 'validation_error', ['body.expires_at out_of_range']],
  // A production charge the lender's PSP did not register (contract §16).
  ['psp_unavailable', 503, 'psp_unavailable', []],
  ['psp_refused', 502, 'psp_refused', []],
];
const customerRefusals: [string, number, string, string[]][] = [
  ['unknown_type', 409, 'invalid_state', []],
  ['invalid_state', 409, 'invalid_state', []],
  ['customer_already_exists', 409, 'customer_already_exists', []],
];

describe('a workflow’s refusal reaches the partner as its problem', () => {
  for (const [workflow, map, refusals] of [
    ['loan', (error: unknown) => loanProblem(error), loanRefusals],
    [
      'customer',
      (error: unknown) => customerProblem(error, { status: 'under_review' }),
      customerRefusals,
    ],
  ] as const) {
    for (const [type, status, code, paths] of refusals) {
      it(`${workflow}: ${type}, thrown by the workflow or by an activity, is ${status} ${code}`, () => {
        expect(problemOf(map(byWorkflow(type)))).toEqual({ status, code, paths });
        expect(problemOf(map(byActivity(type)))).toEqual({ status, code, paths });
      });
    }
  }

  it('a loan the record says goes on, whose workflow Temporal found closed, is a 503 to retry', () => {
    const closed = new WorkflowExecutionAlreadyStartedError(
      'Workflow execution already started',
      'loan/ln_0123456789abcdef0123456789abcdef',
      'loanWorkflow',
    );
    expect(problemOf(loanProblem(closed))).toEqual({
      status: 503,
      code: 'service_unavailable',
      paths: [],
    });
  });

  it('leaves what is not a refusal as it is: a 500, never a made-up problem', () => {
    for (const error of [byActivity('ECONNREFUSED'), byActivity(''), new Error('boom')])
      expect(loanProblem(error)).toBe(error);
    const timedOut = new WorkflowUpdateFailedError(
      'Workflow Update failed',
      new ActivityFailure(
        'Activity task timed out',
        'recordPayment',
        '3',
        RetryState.TIMEOUT,
        'w',
        undefined,
      ),
    );
    expect(customerProblem(timedOut, { status: 'active' })).toBe(timedOut);
  });
});
