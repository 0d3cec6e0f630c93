import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import type { UpdateDefinition } from '@temporalio/common';
import type { Loan, LoanView } from '../db/queries/loans.js';
import { endedStatuses } from '../domain/loans/loans.js';
import { ProblemError, problems } from '../errors.js';
import { keyedLimiter } from '../limits/keyed-limiter.js';
import type { LoanInput } from '../../workflows/loan/messages.js';
import { clockAt } from '../../workflows/sandbox-clock/messages.js';
import { updateWithStart, type WorkflowStart } from './outbox.js';
import { updateProblem } from './update-problems.js';
import { workflowIds, workflowTypes } from './workflow-ids.js';

/**
 * The workflow's input, read off the stored loan: the outbox and update-with-start agree.
 * `sandboxDisbursementDelayMs` is SANDBOX_DISBURSEMENT_DELAY (sandbox loans only).
 */
export function loanInput(loan: LoanView, sandboxDisbursementDelayMs: number): LoanInput {
  return {
    loanId: loan.id,
    customerId: loan.customerId,
    creditOfferId: loan.creditOfferId,
    partnerId: loan.partnerId,
    environment: loan.environment,
    signatureDeadline: loan.signatureDeadline.getTime(),
    sandboxDisbursementDelayMs: loan.environment === 'sandbox' ? sandboxDisbursementDelayMs : null,
    requestedAmount: loan.figures.requested_amount,
    signerCpfs: loan.signers.map((signer) => signer.cpf),
    installmentAmounts: loan.figures.schedule.map((row) => row.installment_amount),
    installmentDueDates: loan.figures.schedule.map((row) => row.due_date),
    lateChargeRates: loan.lateChargeRates,
    ...(loan.clockOffsetMs > 0 ? { clock: clockAt(loan.clockOffsetMs) } : {}),
  };
}

const loanSearchAttributes = (loan: Loan) => ({
  PartnerId: loan.partnerId,
  Environment: loan.environment,
  CustomerId: loan.customerId,
  LoanId: loan.id,
});

const loanSummary = (loan: Loan) =>
  `Loan ${loan.id} of ${loan.customerId} (partner ${loan.partnerId}, ${loan.environment})`;

/** The outbox entry that starts a new loan's workflow after `POST /v3/loans` commits. */
export function loanStart(
  loan: LoanView,
  taskQueue: string,
  sandboxDisbursementDelayMs: number,
): WorkflowStart {
  return {
    workflowId: workflowIds.loan(loan.id),
    workflowType: workflowTypes.loan,
    taskQueue,
    args: [loanInput(loan, sandboxDisbursementDelayMs)],
    searchAttributes: loanSearchAttributes(loan),
    summary: loanSummary(loan),
  };
}

/**
 * Hands a command to the loan's workflow and waits for its outcome, starting the workflow if its
 * outbox start has not happened yet (update-with-start). The workflow's refusals come back as the
 * matching problem: 409 `invalid_state` or `payment_reference_conflict`, 422 for a cpf that does
 * not sign this loan or a payment its rules refuse.
 */
export async function changeLoan<Ret, Args extends unknown[]>(
  deps: { temporal: Client; taskQueue: string; sandboxDisbursementDelayMs: number },
  loan: LoanView,
  update: UpdateDefinition<Ret, Args>,
  args: Args,
  /**
   * Names the command, so a request retried after an unclear answer (a 503) finds the command it
   * sent rather than sending a second one (Temporal keeps an Update's outcome by its id).
   */
  updateId?: string,
): Promise<Ret> {
  // An ended loan is refused from its record (contract §13): its workflow may be long gone, and an
  // update-with-start after the closed run's retention would start a fresh one.
  if (endedStatuses.includes(loan.status))
    throw new ProblemError(
      'invalid_state',
      `The loan is ${loan.status}; it takes no more commands.`,
    );
  for (let attempt = 1; ; attempt++) {
    try {
      return await updatesInFlight(loan.id, () =>
        updateWithStart(
          deps.temporal,
          loanStart(loan, deps.taskQueue, deps.sandboxDisbursementDelayMs),
          update,
          args,
          updateId,
        ),
      );
    } catch (error) {
      // Between two runs (a continue-as-new: a loan continues every 12 payments), the next run
      // takes the command a moment later; the partner hears a 503 only if it still has not.
      if (
        !(error instanceof WorkflowExecutionAlreadyStartedError) ||
        attempt === BETWEEN_RUNS_TRIES
      )
        throw toProblem(error);
      await sleep(BETWEEN_RUNS_BACKOFF_MS * 2 ** (attempt - 1));
    }
  }
}

/**
 * Commands this process has in flight to one loan's workflow, the rest waiting here in turn. The
 * workflow runs them one at a time anyway, and Temporal refuses an 11th Update in flight on a
 * workflow (RESOURCE_EXHAUSTED, which the client retries with backoff up to 10 times before the
 * partner hears a 503): forty payments sent together to one loan all land, in the order they came.
 */
const updatesInFlight = keyedLimiter(4);

/** Tries of a command that found the loan's workflow between two runs: 0.1 + 0.2 + … ≈ 3 s. */
const BETWEEN_RUNS_TRIES = 6;
const BETWEEN_RUNS_BACKOFF_MS = 100;

/** A loan workflow's failure as the partner reads it (exported for its tests). */
export function toProblem(error: unknown): unknown {
  return updateProblem(error, {
    workflow: 'The loan’s workflow',
    // The record says the loan goes on (an ended one is refused before), yet Temporal found no
    // run to take the command: the workflow was between two runs (a continue-as-new). Retry.
    closed: () =>
      problems.serviceUnavailable(
        `The loan’s workflow was between two runs and did not take the command; retry shortly.`,
      ),
    byType: {
      invalid_state: (message) => new ProblemError('invalid_state', message),
      // A claim an API of the release before sent bare, refused by this release's workflow.
      message_without_payload: () =>
        problems.serviceUnavailable('The loan’s workflow is being upgraded; retry shortly.'),
      release_window_passed: (message) => new ProblemError('invalid_state', message),
      signer_not_found: (message) =>
        problems.validation([{ path: 'body.cpf', code: 'not_a_signer', message }]),
      payment_amount_mismatch: (message) =>
        problems.validation([{ path: 'body.amount', code: 'not_the_amount_due', message }]),
      // A payment's refusals, decided under the loan's lock (the API checked them first).
      payment_reference_conflict: (message) =>
        new ProblemError('payment_reference_conflict', message),
      payment_above_payoff: (message) =>
        problems.validation([{ path: 'body.amount', code: 'above_payoff_amount', message }]),
      before_latest_payment: (message) =>
        problems.validation([{ path: 'body.paid_at', code: 'before_latest_payment', message }]),
      // A charge's, decided under the loan's lock (the API checked them first).
      nothing_overdue: (message) =>
        problems.validation([{ path: 'body.scope', code: 'nothing_overdue', message }]),
      above_payoff_amount: (message) =>
        problems.validation([{ path: 'body.amount', code: 'above_payoff_amount', message }]),
      invalid_expires_at: (message) =>
        problems.validation([{ path: 'body.expires_at', code: 'out_of_range', message }]),
      // A production charge the lender's PSP did not register (contract §16): nothing written.
      psp_unavailable: (message) =>
        new ProblemError(
          'psp_unavailable',
          `The lender’s PSP did not register the charge; retry shortly. (${message})`,
          {},
          { 'Retry-After': '5' },
        ),
      psp_refused: (message) =>
        new ProblemError(
          'psp_refused',
          `The lender’s PSP did not take the charge, and would not again: ${message}`,
        ),
    },
  });
}
