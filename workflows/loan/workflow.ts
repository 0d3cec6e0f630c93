import type { Actors } from '../../src/domain/operators.js';
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import {
  cancellableStatuses,
  sandboxDisbursementFails,
  type LoanError,
  type LoanStatus,
} from '../../src/domain/loans/loans.js';
import { addDays, businessDate, startOfBusinessDate } from '../../src/domain/business-date.js';
import { lastReleaseDate } from '../../src/domain/credit/release-repricing.js';
import type { PaymentRequest } from '../../src/domain/loans/payments.js';
import { amountDue, type LateChargeRates } from '../../src/domain/loans/repayment.js';
import { workflowIds } from '../../src/temporal/workflow-ids.js';
import { customerClock } from '../clock.js';
import {
  loanFinishedSignal,
  offerAcceptedSignal,
  releaseOfferSignal,
} from '../credit-offers/messages.js';
import { historyFull } from '../history.js';
import { hexId, pixEventIds } from '../ids.js';
import { databaseWrite, pspCall } from '../presets.js';
import { stepQueue } from '../step-queue.js';
import {
  cancelUpdate,
  claimDisbursementUpdate,
  createChargeUpdate,
  disbursementUpdate,
  exactPaymentUpdate,
  loanProgressQuery,
  paymentUpdate,
  payoutOutcomeSignal,
  payoffUpdate,
  recordPixUpdate,
  signUpdate,
  type LoanInput,
  type SignRequest,
} from './messages.js';
import { watchDueDates } from './due-dates.js';
import { writeOffWatch } from './write-off.js';
import { agreementWatch, eitherDue } from './agreements.js';
import { showLoanDetails, startingProgress } from './state.js';
import { answerRefinancedFinish, payoutRefusal, release } from './refinancing.js';

const {
  claimDisbursement,
  createCharge,
  expireCharge,
  recordPix,
  recordSignature,
  recordLoanEnd,
  recordDisbursement,
  recordPayment,
  recordLoanPayment,
  recordOverdue,
  recordPayoff,
} = proxyActivities<Activities>(databaseWrite);

const { sendDisbursementPayout, checkPayout, recordPayoutReturned } =
  proxyActivities<Activities>(pspCall);

/** The longest wait between two questions to the PSP about a payout with no outcome yet. */
const LONGEST_PAYOUT_POLL_MS = 60 * 60_000;

/** The refusals of the payment's activity, answered to the caller as they are. */
const paymentRefusals = [
  'payment_reference_conflict',
  'payment_above_payoff',
  'before_latest_payment',
  'invalid_state',
  // A charge's.
  'nothing_overdue',
  'above_payoff_amount',
  'invalid_expires_at',
];

/** An activity's refusal (a non-retryable failure of a known type) fails the Update with it. */
const surfaceRefusal = (error: unknown): never => {
  if (
    error instanceof ActivityFailure &&
    error.cause instanceof ApplicationFailure &&
    paymentRefusals.includes(error.cause.type ?? '')
  )
    throw error.cause;
  throw error;
};

/** Loans made before late charges were configurable kept §12's defaults. */
const defaultLateChargeRates: LateChargeRates = { feeRate: '0.02', monthlyInterestRate: '0.01' };

/** A run records at most this many payments (a year of a monthly loan), then continues as new. */
export const PAYMENTS_PER_RUN = 12;

const refuse = (type: string, message: string): never => {
  throw ApplicationFailure.create({ type, message, nonRetryable: true });
};

/**
 * One per loan (`loan/{ln_id}`), started by the outbox row `POST /v3/loans` commits with the loan.
 * The only writer of the loan after its creation: it collects the signatures (Updates from the
 * hosted page and the sandbox helper) until `LOAN_SIGNATURE_DEADLINE`, waits for ops' claim and
 * report of the disbursement (a timer in the sandbox) until the release window ends, records each
 * payment of any amount (`record-payment`, allocated by its activity) and finishes the loan when
 * every row is paid. Every step is one activity writing the change, its ledger entry and its
 * event in one transaction, keyed so a retry writes nothing twice; a payment is keyed by its
 * reference. The offer's workflow hears of the loan's start and end. Repayment continues as new
 * every `PAYMENTS_PER_RUN` payments, carrying its progress (status, signers who signed, rows paid
 * at each end, rows marked overdue, the claim), so a 30-year loan's history stays small.
 */
export async function loanWorkflow(input: LoanInput): Promise<LoanStatus> {
  const tenant = { partnerId: input.partnerId, environment: input.environment };
  const { loanId } = input;
  const progress = startingProgress(input);
  /** What ops see for this workflow in the Temporal UI; shown after every change of `progress`. */
  const showDetails = () => showLoanDetails(input, progress);
  /** Set while repaying with an agreement watch: a payment reached the agreement (contract §17). */
  let agreementChanged: (() => void) | undefined;
  /** Payments this run recorded: a run records at most `PAYMENTS_PER_RUN`. */
  let paymentsThisRun = 0;
  const clock = customerClock(input.customerId, input.clock);
  /** The business instant of a step: the customer's clock now, or the deadline that fell due. */
  const businessNow = (at = clock.now()) => new Date(at).toISOString();
  const dueDates = input.installmentDueDates ?? [];
  const lateChargeRates = input.lateChargeRates ?? defaultLateChargeRates;
  const offers = getExternalWorkflowHandle(workflowIds.creditOffers(input.customerId));
  const offer = { offerId: input.creditOfferId, loanId };

  // Steps run one at a time: a cancellation never interleaves with a signature or a disbursement.
  const serialized = stepQueue();

  /** Tells the offer's workflow; one that has ended (a denied customer's) has nothing to hear. */
  const tellOffer = async (send: () => Promise<void>) => {
    try {
      await send();
    } catch (error) {
      log.warn('credit-offers workflow not signalled', { loanId, error: String(error) });
    }
  };

  const end = async (
    ending:
      { status: 'cancelled'; cancellationReason: string } | { status: 'error'; error: LoanError },
  ) => {
    await recordLoanEnd({ tenant, loanId, ...ending, eventId: hexId('evt') });
    progress.status = ending.status;
    showDetails();
    await tellOffer(() =>
      offers.signal(releaseOfferSignal, {
        ...offer,
        reason: ending.status === 'cancelled' ? 'loan_cancelled' : 'loan_error',
      }),
    );
  };

  /** The end of the last day the money can be released (7 days before the first due date). */
  const releaseWindowEnds =
    dueDates[0] === undefined
      ? null
      : startOfBusinessDate(addDays(lastReleaseDate(dueDates[0]), 1));
  const releaseWindowPassed = () =>
    releaseWindowEnds !== null && clock.now() >= releaseWindowEnds && !progress.claimed;
  const cancelForReleaseWindow = () =>
    end({ status: 'cancelled', cancellationReason: 'release_window_passed' });

  const disburse = async (at: string, actors: Actors = {}) => {
    const step = {
      at,
      transactionId: hexId('txn'),
      eventId: hexId('evt'),
      // Absent when the sandbox disbursed by itself: the activity's input as it always was.
      ...(actors.actor ? { actor: actors.actor } : {}),
      ...(actors.approvedBy ? { approvedBy: actors.approvedBy } : {}),
    };
    // Contract §17: a refinancing's release pays its old loans off, or is refused when one changed.
    if (patched('refinancing')) {
      const refused = await release({ tenant, loanId, customerId: input.customerId }, step);
      if (refused) {
        log.info('refinancing release refused', { loanId, reason: refused.changed });
        await end({ status: 'cancelled', cancellationReason: 'refinanced_loan_changed' });
        return;
      }
    } else await recordDisbursement({ tenant, loanId, ...step });
    progress.status = 'active';
    progress.claimed = true;
    showDetails();
  };

  /** A row found unpaid when its due date ended (`deadline`, on the customer's clock). */
  const markOverdue = async (installmentNumber: number, deadline: number | null) => {
    await recordOverdue({
      tenant,
      loanId,
      installmentNumber,
      at: businessNow(deadline ?? undefined),
      eventId: hexId('evt'),
    });
    progress.overdueThrough = installmentNumber;
    showDetails();
  };

  // Each check runs twice: in the validator (a refusal leaves no trace in the history) and again
  // when the step's turn comes, since an earlier step may have changed the loan meanwhile.
  const assertSignable = ({ cpf }: SignRequest) => {
    if (!input.signerCpfs.includes(cpf))
      refuse('signer_not_found', 'This cpf is not a signer of the loan.');
    if (!progress.signed.includes(cpf) && progress.status !== 'awaiting_signatures')
      refuse('invalid_state', `The loan is ${progress.status}; it takes no more signatures.`);
  };
  const assertCancellable = () => {
    if (!cancellableStatuses.includes(progress.status))
      refuse('invalid_state', `The loan is ${progress.status}; it can no longer be cancelled.`);
    if (progress.claimed)
      refuse(
        'invalid_state',
        'The disbursement is under way; the loan can no longer be cancelled.',
      );
  };
  const assertStatus = (wanted: LoanStatus) => {
    if (progress.status !== wanted)
      refuse('invalid_state', `The loan is ${progress.status}, not ${wanted}.`);
  };
  /** Ops report by hand only a disbursement no payout is carrying out (contract §16). */
  const assertReportable = () => {
    assertStatus('processing');
    if (progress.payout)
      refuse(
        'invalid_state',
        `The loan's payout ${progress.payout.id} is at the PSP: its outcome confirms or fails the disbursement.`,
      );
  };
  const assertPayable = ({ amount, paidAt }: { amount: number; paidAt: string }) => {
    assertStatus('active');
    const index = progress.paidInstallments;
    const installment = input.installmentAmounts[index];
    const dueDate = dueDates[index];
    if (installment === undefined) return;
    const day = businessDate(new Date(paidAt));
    const due =
      dueDate === undefined
        ? installment
        : amountDue(
            { number: index + 1, due_date: dueDate, installment_amount: installment },
            day,
            lateChargeRates,
          ).amount;
    if (amount !== due)
      refuse(
        'payment_amount_mismatch',
        `Installment ${index + 1} is due: ${due} centavos on ${day}.`,
      );
  };

  setHandler(
    signUpdate,
    (request) =>
      serialized(async () => {
        assertSignable(request);
        const { signedAt, allSigned } = await recordSignature({
          tenant,
          loanId,
          ...request,
          eventIds: { signature: hexId('evt'), processing: hexId('evt') },
        });
        if (!progress.signed.includes(request.cpf)) progress.signed.push(request.cpf);
        if (allSigned && progress.status === 'awaiting_signatures') progress.status = 'processing';
        showDetails();
        return { signedAt };
      }),
    { validator: assertSignable },
  );

  setHandler(
    cancelUpdate,
    ({ reason }) =>
      serialized(async () => {
        assertCancellable();
        await end({ status: 'cancelled', cancellationReason: reason ?? 'requested' });
      }),
    { validator: (_request: { reason: string | null }) => assertCancellable() },
  );

  setHandler(
    claimDisbursementUpdate,
    () =>
      serialized(async () => {
        assertStatus('processing');
        if (progress.claimed) return;
        if (releaseWindowPassed()) {
          await cancelForReleaseWindow();
          refuse(
            'release_window_passed',
            'The money can no longer be released 7 days before the first due date: the loan is cancelled.',
          );
        }
        await claimDisbursement({ tenant, loanId });
        progress.claimed = true;
        showDetails();
      }),
    {
      // Validators do not run on replay: runs accepted claims without a payload replay as before.
      validator: (request?: { loanId: string }) => {
        if (request?.loanId !== loanId)
          refuse(
            'message_without_payload',
            'A claim names its loan: sent by the API, through the payload codec.',
          );
        assertStatus('processing');
      },
    },
  );

  setHandler(
    disbursementUpdate,
    ({ outcome, reason, at, actor, approvedBy }) =>
      serialized(async () => {
        assertReportable();
        if (outcome === 'confirmed') await disburse(at, { actor, approvedBy });
        else
          await end({
            status: 'error',
            error: { code: 'disbursement_failed', message: reason ?? 'The disbursement failed.' },
          });
      }),
    { validator: (_report: { outcome: string }) => assertReportable() },
  );

  setHandler(
    paymentUpdate,
    (payment) =>
      serialized(async () => {
        assertStatus('active');
        const outcome = await recordLoanPayment({
          tenant,
          loanId,
          payment,
          // When it is booked: the date of a payment that states none (the customer's clock).
          at: businessNow(),
          transactionId: hexId('txn'),
          eventIds: { payment: hexId('evt'), finished: hexId('evt') },
        }).catch(surfaceRefusal);
        if (!outcome.repeated) paymentsThisRun += 1;
        progress.paidInstallments = outcome.paidInstallments;
        progress.lastUnpaid = outcome.lastUnpaid;
        if (outcome.finished) progress.status = 'finished';
        // Contract §17: the payment reached the loan's agreement, whose deadline moved.
        if (outcome.agreementChanged) agreementChanged?.();
        showDetails();
        return outcome;
      }),
    { validator: (_payment: PaymentRequest) => assertStatus('active') },
  );

  setHandler(
    exactPaymentUpdate,
    (payment) =>
      serialized(async () => {
        assertPayable(payment);
        const installmentNumber = progress.paidInstallments + 1;
        const last = installmentNumber === input.installmentAmounts.length;
        await recordPayment({
          tenant,
          loanId,
          installmentNumber,
          amount: payment.amount,
          paidAt: payment.paidAt,
          last,
          transactionId: hexId('txn'),
          eventIds: { payment: hexId('evt'), finished: hexId('evt') },
        });
        paymentsThisRun += 1;
        progress.paidInstallments = installmentNumber;
        if (last) progress.status = 'finished';
        showDetails();
        return { installmentNumber };
      }),
    { validator: assertPayable },
  );

  setHandler(
    payoffUpdate,
    ({ paidAt }) =>
      serialized(async () => {
        assertStatus('active');
        const { amount } = await recordPayoff({
          tenant,
          loanId,
          paidAt,
          transactionId: hexId('txn'),
          eventId: hexId('evt'),
        });
        progress.paidInstallments = input.installmentAmounts.length;
        progress.status = 'finished';
        showDetails();
        return { amount };
      }),
    { validator: (_request: { paidAt: string }) => assertStatus('active') },
  );

  /** The loan was withdrawn from (CDC art. 49): its offer is handled as after a finished loan. */
  let withdrawn = false;

  setHandler(
    createChargeUpdate,
    ({ hasCnpj, ...request }) =>
      serialized(async () => {
        assertStatus('active');
        const created = await createCharge({
          tenant,
          loanId,
          request,
          hasCnpj,
          at: businessNow(),
          eventIds: { created: hexId('evt'), cancelled: hexId('evt') },
        }).catch(surfaceRefusal);
        if ('withdrawn' in created) {
          progress.status = 'cancelled';
          progress.charge = undefined;
          withdrawn = true;
          showDetails();
          return created;
        }
        if (created.status === 'active')
          progress.charge = { id: created.chargeId, expiresAt: Date.parse(created.expiresAt) };
        showDetails();
        return { chargeId: created.chargeId, expiresAt: created.expiresAt };
      }),
    { validator: (_request: { scope: string }) => assertStatus('active') },
  );

  // Money received is never refused (contract §14): no validator, whatever the loan's state.
  setHandler(recordPixUpdate, ({ endToEndId }) =>
    serialized(async () => {
      const outcome = await recordPix({
        tenant,
        endToEndId,
        at: businessNow(),
        transactionId: hexId('txn'),
        eventIds: pixEventIds(),
      });
      if (outcome.repeated) return outcome;
      if (progress.status === 'active') {
        paymentsThisRun += 1;
        progress.paidInstallments = outcome.paidInstallments;
        progress.lastUnpaid = outcome.lastUnpaid;
        if (outcome.status === 'finished') progress.status = 'finished';
        if (outcome.status === 'cancelled') {
          progress.status = 'cancelled';
          withdrawn = true;
        }
        if (outcome.agreementChanged) agreementChanged?.();
      }
      if (progress.charge?.id === outcome.chargeId || progress.status !== 'active')
        progress.charge = undefined;
      showDetails();
      return outcome;
    }),
  );

  /** The active charge's time is up: `expired`, unless it was paid or replaced meanwhile. */
  const expireActiveCharge = async (chargeId: string) => {
    await expireCharge({ tenant, chargeId, eventId: hexId('evt') });
    if (progress.charge?.id === chargeId) progress.charge = undefined;
    showDetails();
  };

  /** A notification of the payout's outcome came since the workflow last read it. */
  let payoutNotified = false;

  /** The active loan's payout came back: the loan is cancelled and undone (contract §16). */
  const cancelForReturnedPayout = async (payoutId: string) => {
    if (progress.status !== 'active') return;
    const cancelled = await recordPayoutReturned({
      tenant,
      loanId,
      payoutId,
      at: businessNow(),
      transactionId: hexId('txn'),
      eventIds: { cancelled: hexId('evt'), refundDue: hexId('evt'), chargeCancelled: hexId('evt') },
    });
    if (!cancelled) return;
    progress.status = 'cancelled';
    progress.charge = undefined;
    showDetails();
    await tellOffer(() =>
      offers.signal(releaseOfferSignal, { ...offer, reason: 'loan_cancelled' }),
    );
  };

  setHandler(payoutOutcomeSignal, ({ payoutId, status }) => {
    if (progress.payout?.id !== payoutId) return;
    payoutNotified = true;
    // After any step in hand (the disbursement its confirmation started, say).
    if (status === 'returned') void serialized(() => cancelForReturnedPayout(payoutId));
  });

  /**
   * The claimed disbursement of a production loan, sent as a payout (contract §16): its id drawn
   * here is the claim's, the payout's idempotency key at the PSP. Then the outcome, notified (the
   * signal) or asked for when none came (a timer doubling from PAYOUT_POLL_INTERVAL to an hour):
   * `confirmed` activates the loan as ops' confirmation does, `failed` ends it in `error`,
   * `returned` before it was active cancels it. Where no payout can be sent (no PSP, a bank
   * account), ops' manual path stays the loan's.
   */
  const disburseByPayout = async () => {
    // Contract §17: no money leaves for a refinancing whose old loans changed since it was priced.
    if (patched('refinancing')) {
      const refused = await payoutRefusal(tenant, loanId, businessNow());
      if (refused) {
        log.info('refinancing payout refused', { loanId, reason: refused });
        await serialized(async () => {
          if (progress.status === 'processing')
            await end({ status: 'cancelled', cancellationReason: 'refinanced_loan_changed' });
        });
        return;
      }
    }
    const payoutId = hexId('pyt');
    progress.payout = { id: payoutId };
    showDetails();
    const sent = await sendDisbursementPayout({ tenant, loanId, payoutId });
    if (!sent.sent) {
      log.info('the payout is left to ops', { loanId, reason: sent.reason });
      progress.payout = undefined;
      showDetails();
      return;
    }
    let state = sent;
    let wait = sent.pollIntervalMs;
    for (;;) {
      const { status } = state;
      if (status === 'confirmed') {
        await serialized(async () => {
          if (progress.status === 'processing') await disburse(state.settledAt ?? businessNow());
        });
        return;
      }
      if (status === 'failed' || status === 'returned') {
        await serialized(async () => {
          if (progress.status !== 'processing') return;
          if (status === 'failed')
            await end({
              status: 'error',
              error: {
                code: 'disbursement_failed',
                message: `The payout failed at the PSP: ${state.failureReason ?? 'no reason given'}.`,
              },
            });
          else await end({ status: 'cancelled', cancellationReason: 'payout_returned' });
        });
        return;
      }
      const notified = await condition(
        () => payoutNotified || progress.status !== 'processing',
        wait,
      );
      if (progress.status !== 'processing') return;
      // A notification while the record is read wakes the next wait at once.
      payoutNotified = false;
      state = { ...state, ...(await checkPayout({ payoutId, ask: !notified })) };
      if (!notified) wait = Math.min(wait * 2, LONGEST_PAYOUT_POLL_MS);
    }
  };

  setHandler(loanProgressQuery, () => progress);
  // Contract §17: paid off by a new loan's release, the loan is finished (see refinancing.ts).
  const paidOffBy = answerRefinancedFinish(tenant, loanId, serialized, () => {
    progress.status = 'finished';
    progress.charge = undefined;
    showDetails();
  });

  showDetails();

  if (!input.carried) await tellOffer(() => offers.signal(offerAcceptedSignal, offer));

  if (progress.status === 'awaiting_signatures') {
    const moved = await clock.until(
      input.signatureDeadline,
      () => progress.status !== 'awaiting_signatures',
    );
    if (!moved)
      await serialized(async () => {
        if (progress.status === 'awaiting_signatures')
          await end({ status: 'cancelled', cancellationReason: 'signature_deadline' });
      });
  }

  if (progress.status === 'processing') {
    const delay = input.sandboxDisbursementDelayMs;
    const disburseBy = delay === null ? null : clock.now() + delay;
    // Unclaimed at the end of the release window, the loan is cancelled (contract §13). Loans
    // that were processing before the window existed wait for their disbursement alone.
    const windowEnds = patched('release-window') ? releaseWindowEnds : null;
    const notProcessing = () => progress.status !== 'processing';
    if (disburseBy === null || (windowEnds !== null && windowEnds <= disburseBy)) {
      // Ops disburse (or the sandbox's delay outlasts the window): the window, then ops' report.
      if (!(await clock.until(windowEnds, () => notProcessing() || !!progress.claimed)))
        await serialized(async () => {
          if (!notProcessing() && !progress.claimed) await cancelForReleaseWindow();
        });
      // A production loan's claim is carried out by a payout (contract §16); loans claimed before
      // this release wait for ops' report.
      if (
        input.environment === 'production' &&
        !notProcessing() &&
        progress.claimed &&
        patched('payout-disbursement')
      )
        await disburseByPayout();
      await clock.until(null, notProcessing);
    } else if (!(await clock.until(disburseBy, () => notProcessing() || !!progress.claimed)))
      await serialized(async () => {
        if (progress.status !== 'processing' || progress.claimed) return;
        if (sandboxDisbursementFails(input.requestedAmount))
          await end({
            status: 'error',
            error: {
              code: 'disbursement_failed',
              message: 'Sandbox: a requested amount ending in 13 centavos fails to disburse.',
            },
          });
        else await disburse(businessNow(disburseBy ?? undefined));
      });
    // Ops claimed a sandbox loan before its delay ended: they report the outcome, as in production.
    if (progress.claimed) await clock.until(null, notProcessing);
  }

  if (progress.status === 'active') {
    // Installment boundaries: continue as new after a year of payments (or sooner if the server
    // suggests it), with nothing in flight, carrying the progress only.
    // (Runs that reached repayment before this release heed the server's suggestion alone.)
    const bounded = patched('loan-history-limit');
    const runIsFull = () =>
      paymentsThisRun >= PAYMENTS_PER_RUN ||
      (bounded ? historyFull(input.historyLimit) : workflowInfo().continueAsNewSuggested);
    const stop = () => progress.status !== 'active' || runIsFull();
    // Contract §17: the write-off's deadline joins the due dates' (loans repaying before it, none).
    const writeOff = patched('write-off')
      ? await writeOffWatch(progress, dueDates, tenant, loanId, showDetails)
      : undefined;
    // Contract §17: a payment agreement's deadline joins them too (loans repaying before it, none).
    const agreement = patched('agreements')
      ? await agreementWatch(tenant, loanId, serialized, (moved) => {
          progress.paidInstallments = moved.paidInstallments;
          progress.lastUnpaid = moved.lastUnpaid;
          showDetails();
        })
      : undefined;
    agreementChanged = agreement?.changed;
    if (patched('overdue-timers'))
      await watchDueDates(
        { progress, dueDates, clock, serialized },
        stop,
        markOverdue,
        expireActiveCharge,
        eitherDue(writeOff, agreement),
      );
    // A loan started before due-date timers watches none, but still answers the sandbox clock
    // (through the helper: no command until a clock message arrives, as `condition` was).
    else await clock.until(null, stop);
    await condition(allHandlersFinished);
    if (progress.status === 'active')
      return continueAsNew<typeof loanWorkflow>({
        ...input,
        carried: progress,
        clock: clock.state(),
      });
  }

  // A refinanced loan's offer goes on with the loan that paid it off.
  if ((progress.status === 'finished' && !paidOffBy()) || withdrawn)
    await tellOffer(() => offers.signal(loanFinishedSignal, offer));
  await condition(allHandlersFinished);
  await clock.settled();
  return progress.status;
}
