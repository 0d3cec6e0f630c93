import { randomUUID } from 'node:crypto';
import { activityInfo } from '@temporalio/activity';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { timeSkippingEnvironment } from '../helpers/time-skipping.js';
import type { Activities } from '../../activities/index.js';
import {
  currentOfferQuery,
  type CreditOffersInput,
  type OfferState,
} from '../../workflows/credit-offers/messages.js';
import {
  cancelUpdate,
  claimDisbursementUpdate,
  createChargeUpdate,
  disbursementUpdate,
  loanProgressQuery,
  paymentUpdate,
  payoutOutcomeSignal,
  signUpdate,
  type LoanInput,
} from '../../workflows/loan/messages.js';
import type { PayoutStatus } from '../../src/domain/payouts/payouts.js';
import { creditOffersWorkflow, loanWorkflow } from '../../workflows/index.js';
import { PAYMENTS_PER_RUN } from '../../workflows/loan/workflow.js';
import { clockAdvancedSignal } from '../../workflows/sandbox-clock/messages.js';
import { addDays, businessDate, startOfBusinessDate } from '../../src/domain/business-date.js';
import { writeOffDeadline } from '../../src/domain/loans/write-off.js';
import { isBusinessDay, lastDayWithoutCharges } from '../../src/domain/calendar/business-days.js';
import {
  allocatePayment,
  payoffAmount,
  startRepayment,
  type ApplyTo,
  type Repayment,
  type RepaymentTerms,
} from '../../src/domain/loans/allocation.js';
import type { PaymentRequest, RepaymentProgress } from '../../src/domain/loans/payments.js';
import { progressOf } from '../../activities/loans.js';
import { recordHistory, runsOf } from '../helpers/histories.js';

const SECOND = 1_000;
const DAY = 86_400_000;
const CUSTOMER_CPF = '52998224725';
const GUARANTOR_CPF = '11144477735';

/**
 * A time-skipping server per test. One shared by the file skips years between tests (to each
 * test's far timers), and under load a test could start on a server whose clock no longer moved
 * (its sleeps then ran in real time and timed out): each test gets a fresh one, ~1.5 s.
 */
let env: TestWorkflowEnvironment;
beforeEach(async () => {
  env = await timeSkippingEnvironment();
});
afterEach(async () => {
  await env?.teardown();
});

type LoanActivities = Pick<
  Activities,
  | 'recordSignature'
  | 'recordLoanEnd'
  | 'claimDisbursement'
  | 'recordDisbursement'
  | 'recordLoanPayment'
  | 'recordOverdue'
  | 'sendDisbursementPayout'
  | 'checkPayout'
  | 'recordPayoutReturned'
  | 'writeOffTerms'
  | 'recordWriteOff'
  | 'liveAgreementDeadline'
  | 'lapseAgreementAt'
  | 'releaseLoan'
  | 'refinancingChanged'
>;
interface Write {
  kind:
    'sign' | 'end' | 'claim' | 'disburse' | 'pay' | 'overdue' | 'payout' | 'returned' | 'write-off';
  at: number;
  detail: Record<string, unknown>;
}

/**
 * The loan's writes, recorded with the server time each was scheduled at, over a tiny table.
 * Payments are allocated by the real rules (at a contract rate of 0, so a row's value is its
 * face on any day), under references kept as the database keeps them: the workflow's part is
 * what is tested here, the rules and the table have their own tests.
 */
function recordingActivities(
  signers: string[],
  loan: () => LoanInput,
  /** The PSP the loan's payout goes to; none (the default): ops disburse by hand. */
  psp?: PspDouble,
) {
  const writes: Write[] = [];
  const signed = new Map<string, string>();
  const references = new Map<string, { amount: number; paidAt: string }>();
  let repayment: Repayment | undefined;
  const terms = (): RepaymentTerms => ({
    monthlyRate: '0',
    lateCharges: loan().lateChargeRates ?? { feeRate: '0.02', monthlyInterestRate: '0.01' },
  });
  const activities: LoanActivities = {
    async recordSignature(input) {
      const first = signed.get(input.cpf);
      if (first) return { signedAt: first, allSigned: signed.size === signers.length };
      signed.set(input.cpf, input.signedAt);
      writes.push({
        kind: 'sign',
        at: activityInfo().scheduledTimestampMs,
        detail: { cpf: input.cpf },
      });
      return { signedAt: input.signedAt, allSigned: signed.size === signers.length };
    },
    async recordLoanEnd(input) {
      const { tenant: _tenant, eventId: _eventId, loanId: _loanId, ...detail } = input;
      writes.push({ kind: 'end', at: activityInfo().scheduledTimestampMs, detail });
    },
    async claimDisbursement() {
      writes.push({ kind: 'claim', at: activityInfo().scheduledTimestampMs, detail: {} });
    },
    async recordDisbursement(input) {
      const { installmentAmounts, installmentDueDates } = loan();
      const today = businessDate(new Date(input.at));
      repayment = startRepayment(
        installmentAmounts.map((amount, index) => ({
          number: index + 1,
          due_date: installmentDueDates?.[index] ?? addDays(today, 30 * (index + 1)),
          installment_amount: amount,
        })),
        installmentAmounts.reduce((sum, amount) => sum + amount, 0),
      );
      writes.push({ kind: 'disburse', at: activityInfo().scheduledTimestampMs, detail: {} });
    },
    async recordLoanPayment({ payment }) {
      const first = references.get(payment.reference);
      if (first) {
        if (first.amount !== payment.amount && payment.amount !== 'payoff')
          throw ApplicationFailure.nonRetryable('another payment', 'payment_reference_conflict');
        return { ...progressOf(repayment!), repeated: true };
      }
      const date = businessDate(new Date(payment.paidAt));
      const amount =
        payment.amount === 'payoff' ? payoffAmount(repayment!, date, terms()) : payment.amount;
      const allocation = allocatePayment(
        repayment!,
        { amount, date, paidAt: payment.paidAt, applyTo: payment.applyTo },
        terms(),
      );
      repayment = allocation.after;
      references.set(payment.reference, { amount, paidAt: payment.paidAt });
      writes.push({
        kind: 'pay',
        at: activityInfo().scheduledTimestampMs,
        detail: {
          reference: payment.reference,
          amount,
          rows: allocation.rows.map((r) => r.number),
        },
      });
      return { ...progressOf(repayment), repeated: false };
    },
    async recordOverdue(input) {
      writes.push({
        kind: 'overdue',
        at: activityInfo().scheduledTimestampMs,
        detail: { n: input.installmentNumber, at: input.at },
      });
    },
    async sendDisbursementPayout({ payoutId }) {
      if (!psp) return { sent: false, reason: 'no_psp' };
      if (!psp.payouts.has(payoutId)) {
        psp.payouts.set(payoutId, psp.first);
        writes.push({ kind: 'payout', at: activityInfo().scheduledTimestampMs, detail: {} });
      }
      return { sent: true, pollIntervalMs: 60 * SECOND, ...psp.state(payoutId) };
    },
    async checkPayout({ payoutId, ask }) {
      psp!.asked += ask ? 1 : 0;
      return psp!.state(payoutId);
    },
    async recordPayoutReturned() {
      writes.push({ kind: 'returned', at: activityInfo().scheduledTimestampMs, detail: {} });
      return true;
    },
    async writeOffTerms() {
      return { afterDays: 360 };
    },
    async recordWriteOff(input) {
      writes.push({
        kind: 'write-off',
        at: activityInfo().scheduledTimestampMs,
        detail: { at: input.at },
      });
      return { writtenOff: true };
    },
    // No payment agreement on these loans (test/api/agreements.test.ts has them).
    async liveAgreementDeadline() {
      return null;
    },
    async lapseAgreementAt() {
      return { lapsed: false };
    },
    // Nor a refinancing (test/api/refinancing-write-off.test.ts has them): the release is the
    // disbursement as before.
    async releaseLoan(input) {
      await activities.recordDisbursement(input);
      return { released: true, refinanced: [] };
    },
    async refinancingChanged() {
      return null;
    },
  };
  return { activities, writes };
}

/** The PSP as the payout activities see it: each payout's status, and how often it was asked. */
class PspDouble {
  readonly payouts = new Map<string, PayoutStatus>();
  asked = 0;
  constructor(readonly first: PayoutStatus) {}
  state(payoutId: string) {
    const status = this.payouts.get(payoutId)!;
    return {
      payoutId,
      status,
      settledAt: status === 'pending' ? null : new Date().toISOString(),
      failureReason: status === 'failed' ? 'AC03' : null,
      returnReason: status === 'returned' ? 'AC06' : null,
    };
  }
}

interface Harness {
  handle: WorkflowHandle<typeof loanWorkflow>;
  input: LoanInput;
  writes: Write[];
  sign: (cpf: string) => Promise<{ signedAt: string }>;
  /** A payment made now, under a fresh reference unless one is given. */
  pay: (
    amount: number | 'payoff',
    options?: { reference?: string; applyTo?: ApplyTo },
  ) => Promise<RepaymentProgress & { repeated: boolean }>;
}

/** Other workflows a test starts beside the loan, terminated with it. */
const others: WorkflowHandle[] = [];

async function withLoan(
  given: Partial<LoanInput> | ((taskQueue: string) => Promise<Partial<LoanInput>>),
  body: (harness: Harness) => Promise<void>,
  offerActivities: Partial<Activities> = {},
  psp?: PspDouble,
) {
  const signerCpfs = (typeof given === 'function' ? undefined : given.signerCpfs) ?? [
    CUSTOMER_CPF,
    GUARANTOR_CPF,
  ];
  let loanInput: LoanInput | undefined;
  const { activities, writes } = recordingActivities(signerCpfs, () => loanInput!, psp);
  const taskQueue = `loan-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities: { ...activities, ...offerActivities },
  });
  const loanId = `ln_${randomUUID().replaceAll('-', '')}`;
  await worker.runUntil(async () => {
    const overrides = typeof given === 'function' ? await given(taskQueue) : given;
    const input: LoanInput = {
      loanId,
      customerId: `cust_${randomUUID().replaceAll('-', '')}`,
      creditOfferId: `co_${randomUUID().replaceAll('-', '')}`,
      partnerId: 'ptn_test',
      environment: 'sandbox',
      signatureDeadline: (await env.currentTimeMs()) + 7 * DAY,
      sandboxDisbursementDelayMs: 30 * SECOND,
      requestedAmount: 1_000_000,
      signerCpfs,
      installmentAmounts: [35_000, 35_000, 35_003],
      ...overrides,
    };
    loanInput = input;
    const handle = await env.client.workflow.start(loanWorkflow, {
      workflowId: `loan/${loanId}`,
      taskQueue,
      args: [input],
    });
    // Updates go to the workflow id, not a run: the loan continues as new.
    const current = env.client.workflow.getHandle<typeof loanWorkflow>(`loan/${loanId}`);
    try {
      await body({
        handle: current,
        input,
        writes,
        sign: async (cpf) =>
          current.executeUpdate(signUpdate, {
            args: [
              {
                cpf,
                signedAt: new Date(await env.currentTimeMs()).toISOString(),
                ipAddress: '203.0.113.7',
                userAgent: 'test',
                contractSha256: 'a'.repeat(64),
              },
            ],
          }),
        pay: async (amount, options = {}) => {
          const payment: PaymentRequest = {
            reference: options.reference ?? `ref-${randomUUID()}`,
            amount,
            paidAt: new Date(await env.currentTimeMs()).toISOString(),
            applyTo: options.applyTo ?? 'next',
            stated: { amount: true, paidAt: true },
          };
          return current.executeUpdate(paymentUpdate, { args: [payment] });
        },
      });
    } finally {
      // A timer left behind would fire in a later test's skipped time with no worker to take it.
      for (const running of [current, ...others])
        if ((await running.describe()).status.name === 'RUNNING')
          await running.terminate('test over');
      others.splice(0);
      void handle;
    }
  });
}

/**
 * When a row due on `dueDate` becomes overdue: as its last day without charges ends (the next
 * business day's end for a due date that is not one), São Paulo time.
 */
const overdueFrom = (dueDate: string) =>
  startOfBusinessDate(addDays(lastDayWithoutCharges(dueDate), 1));

/** The failure type an Update was refused with, or undefined if it was accepted. */
async function refusal(update: Promise<unknown>): Promise<string | undefined> {
  try {
    await update;
    return undefined;
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure)
      return error.cause.type ?? 'untyped';
    throw error;
  }
}

const kinds = (writes: Write[]) => writes.map((w) => w.kind);

/** Saves a run of the loan's chain for the replay test (the latest unless `runId` names one). */
const record = (handle: WorkflowHandle, caseName: string, runId?: string) =>
  recordHistory(env.client.workflow.getHandle(handle.workflowId, runId), 'loan', caseName);

/** A query's answer once it has one (workflows answer as soon as their first task has run). */
async function eventuallyQuery<T>(ask: () => Promise<T | null | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const answer = await ask();
    if (answer) return answer;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('no answer');
}

describe('loan workflow', () => {
  it('moves to processing with the last signature; a repeated one writes nothing, a stranger is refused', async () => {
    await withLoan({ sandboxDisbursementDelayMs: 365 * DAY }, async ({ handle, sign, writes }) => {
      const first = await sign(CUSTOMER_CPF);
      expect((await handle.query(loanProgressQuery)).status).toBe('awaiting_signatures');
      expect(await sign(CUSTOMER_CPF)).toEqual(first);
      expect(await refusal(sign('39053344705'))).toBe('signer_not_found');
      await sign(GUARANTOR_CPF);
      expect(await handle.query(loanProgressQuery)).toEqual({
        status: 'processing',
        signed: [CUSTOMER_CPF, GUARANTOR_CPF],
        paidInstallments: 0,
      });
      expect(writes.map((w) => w.detail.cpf)).toEqual([CUSTOMER_CPF, GUARANTOR_CPF]);
      await record(handle, 'two-signers-repeated-signature-to-processing');
    });
  });

  it('is cancelled exactly at the signature deadline when a signer never signs', async () => {
    await withLoan({}, async ({ handle, input, sign, writes }) => {
      await sign(CUSTOMER_CPF);
      expect(await handle.result()).toBe('cancelled');
      const end = writes.at(-1)!;
      expect(end.detail).toEqual({ status: 'cancelled', cancellationReason: 'signature_deadline' });
      expect(end.at).toBeGreaterThanOrEqual(input.signatureDeadline);
      // Skipped time stands still while an activity runs: what it adds is the machine's latency
      // (over 1 s seen on a busy one), never a day.
      expect(end.at - input.signatureDeadline).toBeLessThan(5 * SECOND);
      await record(handle, 'signature-deadline-cancelled');
    });
  });

  it('disburses a sandbox loan SANDBOX_DISBURSEMENT_DELAY after the last signature', async () => {
    await withLoan({}, async ({ handle, sign, writes }) => {
      await sign(CUSTOMER_CPF);
      await sign(GUARANTOR_CPF);
      const signedAt = writes.at(-1)!.at;
      await env.sleep(31 * SECOND);
      expect((await handle.query(loanProgressQuery)).status).toBe('active');
      const disbursed = writes.find((w) => w.kind === 'disburse')!;
      expect(disbursed.at - signedAt).toBeGreaterThanOrEqual(30 * SECOND);
      expect(disbursed.at - signedAt).toBeLessThan(31 * SECOND);
    });
  });

  it('fails a sandbox disbursement of an amount ending in 13 centavos', async () => {
    await withLoan(
      { requestedAmount: 1_000_013, signerCpfs: [CUSTOMER_CPF] },
      async ({ handle, sign, writes }) => {
        await sign(CUSTOMER_CPF);
        expect(await handle.result()).toBe('error');
        expect(kinds(writes)).toEqual(['sign', 'end']);
        expect(writes[1]!.detail).toMatchObject({
          status: 'error',
          error: { code: 'disbursement_failed' },
        });
        await record(handle, 'sandbox-disbursement-failed');
      },
    );
  });

  // One test per outcome, each on a time-skipping server of its own: run one after the other on
  // one server, the second's five days never passed once a loan had become active and been
  // terminated there (since the active loan's agreement watch: its run asks one more activity).
  it.each(['confirmed', 'failed'] as const)(
    'in production waits for ops, for days if need be: %s',
    async (outcome) => {
      await withLoan(
        { environment: 'production', sandboxDisbursementDelayMs: null, signerCpfs: [CUSTOMER_CPF] },
        async ({ handle, sign, writes }) => {
          await sign(CUSTOMER_CPF);
          await env.sleep(5 * DAY);
          expect((await handle.query(loanProgressQuery)).status).toBe('processing');
          await handle.executeUpdate(disbursementUpdate, {
            args: [{ outcome, reason: null, at: new Date().toISOString() }],
          });
          expect((await handle.query(loanProgressQuery)).status).toBe(
            outcome === 'confirmed' ? 'active' : 'error',
          );
          expect(kinds(writes)).toEqual(['sign', outcome === 'confirmed' ? 'disburse' : 'end']);
          await record(handle, `production-disbursement-${outcome}`);
        },
      );
    },
  );

  it('a claimed disbursement cannot be cancelled, a cancelled loan cannot be claimed: a race ends one way', async () => {
    const production = {
      environment: 'production' as const,
      sandboxDisbursementDelayMs: null,
      signerCpfs: [CUSTOMER_CPF],
    };
    for (const first of ['claim', 'cancel'] as const)
      await withLoan(production, async ({ handle, input, sign, writes }) => {
        await sign(CUSTOMER_CPF);
        // A claim sent bare (forged at Temporal's frontend, no payload for the codec to refuse) is
        // refused before it is taken (issue 37).
        expect(await refusal(handle.executeUpdate(claimDisbursementUpdate.name))).toBe(
          'message_without_payload',
        );
        const claim = () =>
          handle.executeUpdate(claimDisbursementUpdate, { args: [{ loanId: input.loanId }] });
        const cancel = () => handle.executeUpdate(cancelUpdate, { args: [{ reason: null }] });
        // Sent together: the workflow takes them one at a time, so one wins and the other is
        // refused, whichever arrives first.
        const [a, b] = first === 'claim' ? [claim(), cancel()] : [cancel(), claim()];
        const [outcomeA, outcomeB] = await Promise.all([refusal(a), refusal(b)]);
        expect([outcomeA, outcomeB].sort()).toEqual(['invalid_state', undefined].sort());
        const claimWon = (first === 'claim' ? outcomeA : outcomeB) === undefined;
        const progress = await handle.query(loanProgressQuery);
        expect(progress.status).toBe(claimWon ? 'processing' : 'cancelled');
        expect(kinds(writes)).toEqual(['sign', claimWon ? 'claim' : 'end']);
        if (claimWon) {
          expect(await refusal(claim())).toBeUndefined(); // claiming again changes nothing
          await handle.executeUpdate(disbursementUpdate, {
            args: [{ outcome: 'confirmed', reason: null, at: new Date().toISOString() }],
          });
          expect(kinds(writes)).toEqual(['sign', 'claim', 'disburse']);
        }
        await record(
          handle,
          claimWon ? 'claim-won-race-then-confirmed' : 'cancel-won-race-with-claim',
        );
      });
  });

  it('in production with a PSP, carries out the claim by payout: ops cannot report it meanwhile; confirmed when notified, cancelled when it comes back', async () => {
    const psp = new PspDouble('pending');
    await withLoan(
      { environment: 'production', sandboxDisbursementDelayMs: null, signerCpfs: [CUSTOMER_CPF] },
      async ({ handle, input, sign, writes }) => {
        await sign(CUSTOMER_CPF);
        await handle.executeUpdate(claimDisbursementUpdate, { args: [{ loanId: input.loanId }] });
        const { payout } = await eventuallyQuery(async () => {
          const progress = await handle.query(loanProgressQuery);
          return progress.payout && kinds(writes).includes('payout') ? progress : undefined;
        });
        expect(
          await refusal(
            handle.executeUpdate(disbursementUpdate, {
              args: [{ outcome: 'confirmed', reason: null, at: new Date().toISOString() }],
            }),
          ),
        ).toBe('invalid_state');
        // The PSP confirms and says so.
        psp.payouts.set(payout!.id, 'confirmed');
        await handle.signal(payoutOutcomeSignal, { payoutId: payout!.id, status: 'confirmed' });
        await eventuallyQuery(async () =>
          (await handle.query(loanProgressQuery)).status === 'active' ? true : undefined,
        );
        // A signal repeated, or naming another payout, changes nothing.
        await handle.signal(payoutOutcomeSignal, { payoutId: payout!.id, status: 'confirmed' });
        await handle.signal(payoutOutcomeSignal, { payoutId: 'pyt_other', status: 'returned' });
        expect((await handle.query(loanProgressQuery)).status).toBe('active');
        // Days later the receiving bank gives it back.
        await env.sleep(3 * DAY);
        psp.payouts.set(payout!.id, 'returned');
        await handle.signal(payoutOutcomeSignal, { payoutId: payout!.id, status: 'returned' });
        expect(await handle.result()).toBe('cancelled');
        expect(kinds(writes)).toEqual(['sign', 'claim', 'payout', 'disburse', 'returned']);
        expect(psp.asked).toBe(0);
        await record(handle, 'payout-confirmed-by-notification-then-returned');
      },
      {},
      psp,
    );
  });

  it('in production with a PSP, asks the PSP when no notification comes: failed → error, backing off meanwhile', async () => {
    const psp = new PspDouble('pending');
    await withLoan(
      { environment: 'production', sandboxDisbursementDelayMs: null, signerCpfs: [CUSTOMER_CPF] },
      async ({ handle, input, sign, writes }) => {
        await sign(CUSTOMER_CPF);
        await handle.executeUpdate(claimDisbursementUpdate, { args: [{ loanId: input.loanId }] });
        const { payout } = await eventuallyQuery(async () => {
          const progress = await handle.query(loanProgressQuery);
          return progress.payout && kinds(writes).includes('payout') ? progress : undefined;
        });
        // Asked after 1, 2 and 4 minutes (7 in all); the notification of its failure is lost.
        await env.sleep(7 * 60 * SECOND + 10 * SECOND);
        expect(psp.asked).toBe(3);
        psp.payouts.set(payout!.id, 'failed');
        expect(await handle.result()).toBe('error');
        expect(psp.asked).toBe(4);
        expect(writes.at(-1)).toMatchObject({
          kind: 'end',
          detail: {
            status: 'error',
            error: {
              code: 'disbursement_failed',
              message: expect.stringContaining('AC03') as unknown,
            },
          },
        });
        await record(handle, 'payout-failed-found-by-poll');
      },
      {},
      psp,
    );
  });

  it('cancels an unclaimed loan when the money can no longer arrive 7 days before the first due date', async () => {
    const today = businessDate(new Date(await env.currentTimeMs()));
    const firstDue = addDays(today, 12);
    const windowEnds = startOfBusinessDate(addDays(firstDue, -6));
    await withLoan(
      {
        environment: 'production',
        sandboxDisbursementDelayMs: null,
        signerCpfs: [CUSTOMER_CPF],
        installmentDueDates: [firstDue, addDays(firstDue, 30), addDays(firstDue, 60)],
      },
      async ({ handle, sign, writes }) => {
        await sign(CUSTOMER_CPF);
        await env.sleep(windowEnds - SECOND - (await env.currentTimeMs()));
        expect((await handle.query(loanProgressQuery)).status).toBe('processing');
        await env.sleep(2 * SECOND);
        expect(writes.at(-1)).toMatchObject({
          kind: 'end',
          detail: { status: 'cancelled', cancellationReason: 'release_window_passed' },
        });
        expect(writes.at(-1)!.at - windowEnds).toBeLessThan(SECOND);
        expect(await handle.result()).toBe('cancelled'); // a claim now finds nothing to claim
        await record(handle, 'production-release-window-passed');
      },
    );
  });

  it('cancels while awaiting signatures and while processing; refuses after the disbursement', async () => {
    await withLoan({}, async ({ handle, writes }) => {
      await handle.executeUpdate(cancelUpdate, { args: [{ reason: null }] });
      expect(await handle.result()).toBe('cancelled');
      expect(writes.at(-1)!.detail).toEqual({
        status: 'cancelled',
        cancellationReason: 'requested',
      });
      await record(handle, 'cancelled-awaiting-signatures');
    });
    await withLoan({ signerCpfs: [CUSTOMER_CPF] }, async ({ handle, sign, writes }) => {
      // Reporting a disbursement before the signatures is refused.
      expect(
        await refusal(
          handle.executeUpdate(disbursementUpdate, {
            args: [{ outcome: 'confirmed', reason: null, at: new Date().toISOString() }],
          }),
        ),
      ).toBe('invalid_state');
      await sign(CUSTOMER_CPF);
      await handle.executeUpdate(cancelUpdate, { args: [{ reason: 'changed my mind' }] });
      expect(await handle.result()).toBe('cancelled');
      expect(kinds(writes)).toEqual(['sign', 'end']);
      expect(writes[1]!.detail.cancellationReason).toBe('changed my mind');
      await record(handle, 'cancelled-processing');
    });
    await withLoan({ signerCpfs: [CUSTOMER_CPF] }, async ({ handle, sign }) => {
      await sign(CUSTOMER_CPF);
      await env.sleep(31 * SECOND);
      expect(await refusal(handle.executeUpdate(cancelUpdate, { args: [{ reason: null }] }))).toBe(
        'invalid_state',
      );
    });
  });

  it('records payments by reference: a repeat answers the first, a conflict is refused, the last row finishes', async () => {
    await withLoan({ signerCpfs: [CUSTOMER_CPF] }, async ({ handle, sign, pay, writes }) => {
      expect(await refusal(pay(35_000))).toBe('invalid_state'); // not active yet
      await sign(CUSTOMER_CPF);
      await env.sleep(31 * SECOND);
      const first = { paidInstallments: 1, lastUnpaid: 3, finished: false };
      expect(await pay(35_000, { reference: 'E2E-1' })).toEqual({ ...first, repeated: false });
      // The same payment again (a retry): answered, nothing written.
      expect(await pay(35_000, { reference: 'E2E-1' })).toEqual({ ...first, repeated: true });
      // Another payment under the same reference: refused with the activity's own reason.
      expect(await refusal(pay(20_000, { reference: 'E2E-1' }))).toBe('payment_reference_conflict');
      // A partial payment leaves row 2 unpaid; the rest of it and row 3 finish the loan.
      expect(await pay(20_000)).toMatchObject({ paidInstallments: 1, finished: false });
      expect(await pay(15_000 + 35_003)).toMatchObject({ paidInstallments: 3, finished: true });
      expect(await handle.result()).toBe('finished');
      expect(writes.filter((w) => w.kind === 'pay').map((w) => w.detail.rows)).toEqual([
        [1],
        [2],
        [2, 3],
      ]);
      await expect(pay(35_000)).rejects.toThrow(); // the loan is over
      await record(handle, 'payments-by-reference-repeat-conflict-partial-to-finished');
    });
  });

  it('marks a row overdue when its due date ends unpaid, and then takes its late charges first', async () => {
    const today = businessDate(new Date(await env.currentTimeMs()));
    const dueDates = [addDays(today, 30), addDays(today, 60), addDays(today, 90)];
    await withLoan(
      { signerCpfs: [CUSTOMER_CPF], installmentDueDates: dueDates },
      async ({ handle, sign, pay, writes }) => {
        await sign(CUSTOMER_CPF);
        await env.sleep(31 * SECOND);
        const overdueAt = overdueFrom(dueDates[0]!);
        // The last moment of the due date: not overdue yet.
        await env.sleep(overdueAt - 60 * SECOND - (await env.currentTimeMs()));
        expect(writes.filter((w) => w.kind === 'overdue')).toEqual([]);
        await env.sleep(2 * 60 * SECOND);
        const [overdue] = writes.filter((w) => w.kind === 'overdue');
        expect(overdue!.detail).toEqual({ n: 1, at: new Date(overdueAt).toISOString() });
        expect(overdue!.at - overdueAt).toBeGreaterThanOrEqual(0);
        expect(overdue!.at - overdueAt).toBeLessThan(SECOND);
        expect((await handle.query(loanProgressQuery)).overdueThrough).toBe(1);

        // 15 days late: R$ 350.00 + 2 % fee (R$ 7.00) + 1 % a month × 15/30 (R$ 1.75).
        await env.sleep(
          startOfBusinessDate(addDays(dueDates[0]!, 15)) + DAY / 2 - (await env.currentTimeMs()),
        );
        // The installment alone pays the late interest and the fee first: the row stays unpaid.
        expect(await pay(35_000)).toMatchObject({ paidInstallments: 0 });
        expect(await pay(875)).toMatchObject({ paidInstallments: 1 });
        // The second row is paid before its due date: it never becomes overdue.
        expect(await pay(35_000)).toMatchObject({ paidInstallments: 2 });
        await env.sleep(overdueFrom(dueDates[1]!) + DAY - (await env.currentTimeMs()));
        expect(writes.filter((w) => w.kind === 'overdue').map((w) => w.detail.n)).toEqual([1]);
        // The third is not: it is overdue on the day after its due date.
        await env.sleep(overdueFrom(dueDates[2]!) + SECOND - (await env.currentTimeMs()));
        expect(writes.filter((w) => w.kind === 'overdue').map((w) => w.detail.n)).toEqual([1, 3]);
        expect(await handle.query(loanProgressQuery)).toMatchObject({
          status: 'active',
          paidInstallments: 2,
        });
        await record(handle, 'overdue-paid-with-late-charges-next-overdue');
      },
    );
  });

  it('writes the loan off once its oldest overdue row is overdue more than 360 days, once', async () => {
    const today = businessDate(new Date(await env.currentTimeMs()));
    const dueDates = [addDays(today, 30), addDays(today, 60), addDays(today, 90)];
    const writtenOff = (writes: Write[]) => writes.filter((w) => w.kind === 'write-off');
    await withLoan(
      { signerCpfs: [CUSTOMER_CPF], installmentDueDates: dueDates },
      async ({ handle, sign, writes }) => {
        await sign(CUSTOMER_CPF);
        await env.sleep(31 * SECOND);
        const deadline = writeOffDeadline(dueDates[0]!, 360);
        await env.sleep(deadline - 60 * SECOND - (await env.currentTimeMs()));
        expect(writes.filter((w) => w.kind === 'overdue').map((w) => w.detail.n)).toEqual([
          1, 2, 3,
        ]);
        expect(writtenOff(writes)).toEqual([]);
        await env.sleep(2 * 60 * SECOND);
        expect(writtenOff(writes).map((w) => w.detail)).toEqual([
          { at: new Date(deadline).toISOString() },
        ]);
        expect(await handle.query(loanProgressQuery)).toMatchObject({
          status: 'active',
          writtenOff: true,
        });
        // Once: the rows behind it start no timer of their own.
        await env.sleep(10 * DAY);
        expect(writtenOff(writes)).toHaveLength(1);
        await record(handle, 'written-off-after-360-days');
      },
    );
  });

  it('marks each row that ends unpaid, also while older ones are overdue, and all a clock advance passes at once', async () => {
    const today = businessDate(new Date(await env.currentTimeMs()));
    const dueDates = [30, 60, 90, 120].map((days) => addDays(today, days));
    const endOf = overdueFrom;
    const overdue = (writes: Write[]) =>
      writes.filter((w) => w.kind === 'overdue').map((w) => w.detail);
    await withLoan(
      {
        signerCpfs: [CUSTOMER_CPF],
        installmentAmounts: [35_000, 35_000, 35_000, 35_003],
        installmentDueDates: dueDates,
      },
      async ({ handle, sign, writes }) => {
        await sign(CUSTOMER_CPF);
        await env.sleep(31 * SECOND);
        // Nothing paid: the second row falls due while the first is overdue.
        await env.sleep(endOf(dueDates[1]!) + SECOND - (await env.currentTimeMs()));
        expect(overdue(writes)).toEqual([
          { n: 1, at: new Date(endOf(dueDates[0]!)).toISOString() },
          { n: 2, at: new Date(endOf(dueDates[1]!)).toISOString() },
        ]);

        // The customer's clock jumps 40 days past the third due date, beyond the fourth: both
        // rows are marked at once, each dated by the end of its own due date.
        const offsetMs = endOf(dueDates[3]!) + 5 * DAY - (await env.currentTimeMs());
        await handle.signal(clockAdvancedSignal, {
          offsetMs,
          advance: 'sandbox-clock/none/1',
          round: 1,
        });
        // The workflow takes the fourth activity's result a moment after the activity wrote.
        const marked = async () => (await handle.query(loanProgressQuery)).overdueThrough;
        for (let i = 0; i < 400 && (await marked()) !== 4; i++)
          await new Promise((resolve) => setTimeout(resolve, 25));
        expect(overdue(writes).slice(2)).toEqual([
          { n: 3, at: new Date(endOf(dueDates[2]!)).toISOString() },
          { n: 4, at: new Date(endOf(dueDates[3]!)).toISOString() },
        ]);
        expect(await handle.query(loanProgressQuery)).toMatchObject({
          status: 'active',
          paidInstallments: 0,
          overdueThrough: 4,
        });
        await record(handle, 'overdue-rows-marked-by-timers-and-clock-advance');
      },
    );
  });

  it('settles early with a payment of the payoff amount and finishes; refused unless active', async () => {
    await withLoan({ signerCpfs: [CUSTOMER_CPF] }, async ({ handle, sign, pay, writes }) => {
      expect(await refusal(pay('payoff'))).toBe('invalid_state'); // not disbursed yet
      await sign(CUSTOMER_CPF);
      await env.sleep(31 * SECOND);
      expect(await pay(35_000)).toMatchObject({ paidInstallments: 1 });
      expect(await pay('payoff')).toMatchObject({ paidInstallments: 3, finished: true });
      expect(await handle.result()).toBe('finished');
      expect(writes.map((w) => w.kind)).toEqual(['sign', 'disburse', 'pay', 'pay']);
      expect(writes.at(-1)!.detail).toMatchObject({ amount: 70_003, rows: [2, 3] });
      await expect(pay(35_000)).rejects.toThrow(); // the loan is over
      await record(handle, 'payoff-early-settlement');
    });
  });

  it('gives a row due on a non-business day until the next business day (Lei 7.089/1983)', async () => {
    const today = businessDate(new Date(await env.currentTimeMs()));
    // The first Saturday at least 30 days ahead; its last day without charges is a Monday or later.
    let saturday = addDays(today, 30);
    while (new Date(`${saturday}T00:00:00Z`).getUTCDay() !== 6) saturday = addDays(saturday, 1);
    const lastOnTime = lastDayWithoutCharges(saturday);
    expect(isBusinessDay(lastOnTime) && lastOnTime > addDays(saturday, 1)).toBe(true);
    await withLoan(
      {
        signerCpfs: [CUSTOMER_CPF],
        installmentDueDates: [saturday, addDays(saturday, 30), addDays(saturday, 60)],
      },
      async ({ handle, sign, writes }) => {
        await sign(CUSTOMER_CPF);
        await env.sleep(31 * SECOND);
        const overdueAt = overdueFrom(saturday);
        await env.sleep(overdueAt - SECOND - (await env.currentTimeMs()));
        expect(writes.filter((w) => w.kind === 'overdue')).toEqual([]);
        await env.sleep(2 * SECOND);
        expect(writes.filter((w) => w.kind === 'overdue').map((w) => w.detail)).toEqual([
          { n: 1, at: new Date(overdueAt).toISOString() },
        ]);
        await record(handle, 'overdue-after-non-business-due-date');
      },
    );
  });

  it('watches no row paid from the end (apply_to "last"), only the ones still owing', async () => {
    const today = businessDate(new Date(await env.currentTimeMs()));
    const dueDates = [30, 60, 90].map((days) => addDays(today, days));
    await withLoan(
      { signerCpfs: [CUSTOMER_CPF], installmentDueDates: dueDates },
      async ({ handle, sign, pay, writes }) => {
        await sign(CUSTOMER_CPF);
        await env.sleep(31 * SECOND);
        expect(await pay(35_003 + 35_000, { applyTo: 'last' })).toEqual({
          paidInstallments: 0,
          lastUnpaid: 1,
          finished: false,
          repeated: false,
        });
        expect(writes.at(-1)!.detail.rows).toEqual([3, 2]);
        // Long past every due date, only row 1 was ever found unpaid.
        await env.sleep(overdueFrom(dueDates[2]!) + DAY - (await env.currentTimeMs()));
        expect(writes.filter((w) => w.kind === 'overdue').map((w) => w.detail.n)).toEqual([1]);
        expect(await handle.query(loanProgressQuery)).toMatchObject({
          status: 'active',
          overdueThrough: 1,
          lastUnpaid: 1,
        });
        await record(handle, 'apply-to-last-then-first-row-overdue');
      },
    );
  });

  it('repays a 360-installment loan over continue-as-new runs, each history small', async () => {
    const amounts = [...Array.from({ length: 359 }, () => 1_000), 1_003];
    await withLoan(
      { signerCpfs: [CUSTOMER_CPF], installmentAmounts: amounts },
      async ({ handle, sign, pay, writes }) => {
        await sign(CUSTOMER_CPF);
        await env.sleep(31 * SECOND);
        const firstRun = (await handle.describe()).runId;
        for (const [index, amount] of amounts.entries())
          expect(await pay(amount)).toMatchObject({ paidInstallments: index + 1 });
        expect(await handle.result()).toBe('finished');
        expect(writes.filter((w) => w.kind === 'pay').map((w) => w.detail.rows)).toEqual(
          amounts.map((_, index) => [index + 1]),
        );
        const last = await handle.describe();
        expect(last.runId).not.toBe(firstRun);
        const runs = await runsOf(env.client.workflow, handle.workflowId);
        const sizes = runs.map((run) => run.events);
        expect(sizes.length).toBeGreaterThanOrEqual(360 / PAYMENTS_PER_RUN);
        expect(Math.max(...sizes)).toBeLessThan(400);
        // The first run, one continued from a run and continued again, and the last one.
        await record(handle, 'payments-first-run-continued-as-new', runs[0]!.runId);
        await record(handle, 'payments-continued-run-continued-as-new', runs[1]!.runId);
        await record(handle, 'payments-last-continued-run-to-finished', runs.at(-1)!.runId);
      },
    );
  }, 180_000);

  it('continues as new inside its wait for a due date: charges alone never grow one history past the limit', async () => {
    let charges = 0;
    const chargeActivities: Partial<Activities> = {
      async createCharge() {
        charges += 1;
        const expiresAt = new Date((await env.currentTimeMs()) + 400 * DAY).toISOString();
        return { status: 'active' as const, chargeId: `chg_${charges}`, expiresAt };
      },
      async expireCharge() {
        return Promise.resolve(true);
      },
    };
    await withLoan(
      { signerCpfs: [CUSTOMER_CPF], historyLimit: 80 },
      async ({ handle, sign, pay }) => {
        await sign(CUSTOMER_CPF);
        await env.sleep(31 * SECOND);
        const firstRun = (await handle.describe()).runId;
        // A partner asking for a new charge, again and again, and never a payment.
        for (let i = 0; i < 40; i++)
          await handle.executeUpdate(createChargeUpdate, {
            args: [{ chargeId: `chg_${i}`, scope: 'next', hasCnpj: false }],
          });
        const later = await handle.describe();
        expect(later.runId).not.toBe(firstRun);
        const sizes = (await runsOf(env.client.workflow, handle.workflowId)).map(
          (run) => run.events,
        );
        expect(sizes.length).toBeGreaterThan(2);
        expect(Math.max(...sizes)).toBeLessThan(120);
        // The loan goes on in its latest run: paid in full, it finishes.
        for (const amount of [35_000, 35_000, 35_003]) await pay(amount);
        expect(await handle.result()).toBe('finished');
        const runs = await runsOf(env.client.workflow, handle.workflowId);
        await record(handle, 'history-limit-first-run-continued-as-new', runs[0]!.runId);
        await record(handle, 'history-limit-continued-run-continued-as-new', runs[1]!.runId);
        await record(handle, 'history-limit-last-run-paid-to-finished', runs.at(-1)!.runId);
      },
      chargeActivities,
    );
  });

  it('tells the offer’s workflow: accepted at the start, available again after a cancellation', async () => {
    const stored = new Map<string, OfferState>();
    const offerActivities: Partial<Activities> = {
      async issueOffer(input) {
        stored.set(input.offerId, { status: 'available', loanId: null });
        return { validUntil: activityInfo().scheduledTimestampMs + 30 * DAY, approvedAmount: 1 };
      },
      async recordOfferMove(input) {
        const row = stored.get(input.offerId)!;
        if (row.status === input.from.status && row.loanId === input.from.loanId)
          Object.assign(row, { status: input.status, loanId: input.loanId });
        return { ...row };
      },
      async recordOfferSpent() {},
    };
    const customerId = `cust_${randomUUID().replaceAll('-', '')}`;
    let offers!: WorkflowHandle<typeof creditOffersWorkflow>;
    await withLoan(
      async (taskQueue) => {
        offers = await env.client.workflow.start(creditOffersWorkflow, {
          workflowId: `credit-offers/${customerId}`,
          taskQueue,
          args: [
            {
              customerId,
              partnerId: 'ptn_test',
              environment: 'sandbox',
              offerValidityMs: 30 * DAY,
              renewalDelayMs: DAY,
            } satisfies CreditOffersInput,
          ],
        });
        others.push(offers);
        const offer = await eventuallyQuery(() => offers.query(currentOfferQuery));
        return { customerId, creditOfferId: offer.id, signerCpfs: [CUSTOMER_CPF] };
      },
      async ({ handle, input }) => {
        // What POST /v3/loans wrote in its transaction, before the loan's workflow started.
        stored.set(input.creditOfferId, { status: 'accepted', loanId: input.loanId });
        const accepted = await eventuallyQuery(async () => {
          const offer = await offers.query(currentOfferQuery);
          return offer?.status === 'accepted' ? offer : undefined;
        });
        expect(accepted.loanId).toBe(input.loanId);
        await handle.executeUpdate(cancelUpdate, { args: [{ reason: null }] });
        const released = await eventuallyQuery(async () => {
          const offer = await offers.query(currentOfferQuery);
          return offer?.status === 'available' ? offer : undefined;
        });
        expect(released).toMatchObject({ id: input.creditOfferId, loanId: null });
        expect(stored.get(input.creditOfferId)).toEqual({ status: 'available', loanId: null });
        // Both sides, each told by the other workflow rather than by a test's signal.
        await record(handle, 'cancelled-awaiting-signatures-offer-released');
        await recordHistory(offers, 'credit-offers', 'accepted-then-released-by-loan-workflow');
      },
      offerActivities,
    );
  });
});
