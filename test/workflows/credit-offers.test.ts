import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { activityInfo } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { timeSkippingEnvironment } from '../helpers/time-skipping.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import {
  currentOfferQuery,
  customerDeniedSignal,
  loanFinishedSignal,
  offerAcceptedSignal,
  releaseOfferSignal,
  type CreditOffersInput,
  type LiveOffer,
  type OfferState,
} from '../../workflows/credit-offers/messages.js';
import { creditOffersWorkflow } from '../../workflows/index.js';
import { recordHistory, runsOf } from '../helpers/histories.js';

const DAY = 86_400_000;
const VALIDITY = 30 * DAY;
const RENEWAL = DAY;

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
});
afterAll(async () => {
  await env?.teardown();
});

type Move = { kind: 'issue' | 'move' | 'spent'; at: number; offerId: string; status?: string };

/**
 * Activities over an in-memory table of offers: each write is recorded with the server time it was
 * scheduled at, and a move is conditional on the stored state, as the real one is.
 */
function recordingActivities(options: { eligible?: boolean }) {
  const writes: Move[] = [];
  const stored = new Map<string, OfferState & { validUntil: number }>();
  /** Loans whose end is in the records: released (cancelled, error) or repaid. */
  const loansEnded = new Map<string, 'released' | 'finished'>();
  const activities: Pick<Activities, 'issueOffer' | 'recordOfferMove' | 'recordOfferSpent'> = {
    async issueOffer(input) {
      const at = activityInfo().scheduledTimestampMs;
      if (options.eligible === false) return null;
      writes.push({ kind: 'issue', at, offerId: input.offerId, status: 'available' });
      const validUntil = at + input.validityMs;
      stored.set(input.offerId, { status: 'available', loanId: null, validUntil });
      return { validUntil, approvedAmount: 1_000_000 };
    },
    async recordOfferMove(input) {
      const at = activityInfo().scheduledTimestampMs;
      const row = stored.get(input.offerId)!;
      // As the real one: an accepted offer comes back with whether its loan has ended.
      const answer = () =>
        row.status === 'accepted' && row.loanId
          ? {
              status: row.status,
              loanId: row.loanId,
              loanEnded: loansEnded.get(row.loanId) ?? null,
            }
          : { status: row.status, loanId: row.loanId };
      if (row.status !== input.from.status || row.loanId !== input.from.loanId) return answer();
      writes.push({ kind: 'move', at, offerId: input.offerId, status: input.status });
      Object.assign(row, { status: input.status, loanId: input.loanId });
      return answer();
    },
    async recordOfferSpent(input) {
      writes.push({
        kind: 'spent',
        at: activityInfo().scheduledTimestampMs,
        offerId: input.offerId,
      });
    },
  };
  /** What `POST /v3/loans` does to the offer: accept it if it is available and unexpired. */
  const acceptInDatabase = (offerId: string, loanId: string, now: number): boolean => {
    const row = stored.get(offerId);
    if (!row || row.status !== 'available' || now >= row.validUntil) return false;
    Object.assign(row, { status: 'accepted', loanId });
    writes.push({ kind: 'move', at: now, offerId, status: 'accepted' });
    return true;
  };
  return { activities, writes, acceptInDatabase, loansEnded };
}

async function withCreditOffers(
  options: { eligible?: boolean; historyLimit?: number },
  body: (ctx: {
    handle: WorkflowHandle<typeof creditOffersWorkflow>;
    customerId: string;
    writes: Move[];
    /** The current offer once the workflow has one in the wanted status. */
    offer: (status?: string) => Promise<LiveOffer>;
    /** The API's transaction alone, with no signal. */
    acceptInDatabase: (offerId: string, loanId: string, now: number) => boolean;
    /** A loan takes the offer (the API's transaction, then the loan workflow's signal). */
    accept: (offerId: string, loanId?: string) => Promise<boolean>;
    /** Loans ended in the records (the loan's workflow wrote it; its signal may be lost). */
    loansEnded: Map<string, 'released' | 'finished'>;
    /** Saves the chain's latest run (or its first) for the replay test. */
    record: (caseName: string, run?: 'first' | 'latest') => Promise<void>;
  }) => Promise<void>,
) {
  const { activities, writes, acceptInDatabase, loansEnded } = recordingActivities(options);
  const taskQueue = `credit-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities,
  });
  const customerId = `cust_${randomUUID().replaceAll('-', '')}`;
  const input: CreditOffersInput = {
    customerId,
    partnerId: 'ptn_test',
    environment: 'sandbox',
    offerValidityMs: VALIDITY,
    renewalDelayMs: RENEWAL,
    ...(options.historyLimit ? { historyLimit: options.historyLimit } : {}),
  };
  await worker.runUntil(async () => {
    const handle = await env.client.workflow.start(creditOffersWorkflow, {
      workflowId: `credit-offers/${customerId}`,
      taskQueue,
      args: [input],
    });
    try {
      await body({
        handle,
        customerId,
        writes,
        acceptInDatabase,
        loansEnded,
        async record(caseName, run = 'latest') {
          const runId = run === 'first' ? handle.firstExecutionRunId : undefined;
          await recordHistory(
            env.client.workflow.getHandle(handle.workflowId, runId),
            'credit-offers',
            caseName,
          );
        },
        async offer(status) {
          for (let i = 0; i < 200; i++) {
            const current = await handle.query(currentOfferQuery);
            if (current && (status === undefined || current.status === status)) return current;
            await new Promise((resolve) => setTimeout(resolve, 25));
          }
          throw new Error(
            `no ${status ?? ''} offer; last: ${JSON.stringify(await handle.query(currentOfferQuery))}`,
          );
        },
        async accept(offerId, loanId = `ln_${randomUUID().replaceAll('-', '')}`) {
          if (!acceptInDatabase(offerId, loanId, await env.currentTimeMs())) return false;
          await handle.signal(offerAcceptedSignal, { offerId, loanId });
          return true;
        },
      });
    } finally {
      // A timer left behind would fire in a later test's skipped time with no worker to take it,
      // and hold the test server's clock.
      if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('test over');
    }
  });
}

const statuses = (writes: Move[]) => writes.map((w) => `${w.kind}:${w.status ?? ''}`);

describe('credit-offers workflow', () => {
  it('expires an offer exactly at valid_until, then issues a new one after the renewal delay', async () => {
    await withCreditOffers({}, async ({ writes, offer }) => {
      const first = await offer('available');
      await env.sleep(VALIDITY + RENEWAL + 60_000);
      const second = await offer('available');
      expect(second.id).not.toBe(first.id);

      const [issued, expired, renewed] = writes;
      expect(statuses(writes)).toEqual(['issue:available', 'move:expired', 'issue:available']);
      expect(expired!.offerId).toBe(first.id);
      // The durable timer fires at valid_until (the test server's clock has millisecond steps).
      expect(expired!.at).toBeGreaterThanOrEqual(first.validUntil);
      expect(expired!.at - first.validUntil).toBeLessThan(1_000);
      expect(first.validUntil - issued!.at).toBe(VALIDITY);
      // The renewal delay runs from valid_until, when the offer ended.
      expect(renewed!.at - first.validUntil).toBeGreaterThanOrEqual(RENEWAL);
      expect(renewed!.at - first.validUntil).toBeLessThan(RENEWAL + 1_000);
    });
  });

  it('takes an acceptance written by a loan: no expiry while accepted, a second one refused', async () => {
    await withCreditOffers({}, async ({ offer, accept, writes, record }) => {
      const current = await offer('available');
      const outcomes = [await accept(current.id), await accept(current.id)];
      expect(outcomes).toEqual([true, false]);
      expect((await offer('accepted')).id).toBe(current.id);
      await env.sleep(VALIDITY + DAY);
      expect(statuses(writes)).toEqual(['issue:available', 'move:accepted']);
      expect(await accept('co_unknown')).toBe(false);
      await record('accepted-not-expired');
    });
  });

  it('adopts an acceptance it has not heard of when its timer fires (the signal is late)', async () => {
    await withCreditOffers({}, async ({ handle, offer, acceptInDatabase, writes, record }) => {
      const current = await offer('available');
      // A loan's transaction committed; its workflow has not signalled yet.
      expect(acceptInDatabase(current.id, 'ln_late', await env.currentTimeMs())).toBe(true);
      await env.sleep(VALIDITY + DAY);
      const adopted = await offer('accepted');
      expect(adopted).toMatchObject({ id: current.id, loanId: 'ln_late' });
      expect(statuses(writes)).toEqual(['issue:available', 'move:accepted']);
      // The late signal changes nothing; the loan's release still works.
      await handle.signal(offerAcceptedSignal, { offerId: current.id, loanId: 'ln_late' });
      await handle.signal(releaseOfferSignal, {
        offerId: current.id,
        loanId: 'ln_late',
        reason: 'loan_cancelled',
      });
      await offer('expired');
      expect(statuses(writes)).toEqual(['issue:available', 'move:accepted', 'move:expired']);
      await record('acceptance-unheard-adopted-at-expiry-then-released', 'first');
    });
  });

  it('a loan’s acceptance that never arrives: its release still makes the offer available again', async () => {
    await withCreditOffers({}, async ({ handle, offer, acceptInDatabase, writes, record }) => {
      const current = await offer('available');
      // The loan's transaction accepted it; the loan's signal was lost on the way.
      expect(acceptInDatabase(current.id, 'ln_unheard', await env.currentTimeMs())).toBe(true);
      await env.sleep(DAY);
      await handle.signal(releaseOfferSignal, {
        offerId: current.id,
        loanId: 'ln_unheard',
        reason: 'loan_cancelled',
      });
      await env.sleep(1_000);
      expect(await offer('available')).toMatchObject({ id: current.id, loanId: null });
      expect(statuses(writes)).toEqual(['issue:available', 'move:accepted', 'move:available']);
      await record('acceptance-lost-release-makes-available');
    });
  });

  it('a loan whose acceptance and end both never arrive: the records end it at the offer’s expiry', async () => {
    await withCreditOffers({}, async ({ offer, acceptInDatabase, loansEnded, writes, record }) => {
      const current = await offer('available');
      expect(acceptInDatabase(current.id, 'ln_silent', await env.currentTimeMs())).toBe(true);
      loansEnded.set('ln_silent', 'released'); // cancelled, and its release lost too
      await env.sleep(VALIDITY + DAY);
      // Expired from the records at valid_until, and the next offer follows the renewal delay.
      await env.sleep(RENEWAL + DAY);
      const next = await offer('available');
      expect(next.id).not.toBe(current.id);
      expect(statuses(writes)).toEqual([
        'issue:available',
        'move:accepted',
        'move:expired',
        'issue:available',
      ]);
      await record('acceptance-and-release-lost-expired-from-records', 'first');
    });
  });

  it('a loan repaid whose acceptance and end both never arrive: the records spend the offer at its expiry', async () => {
    await withCreditOffers({}, async ({ offer, acceptInDatabase, loansEnded, writes, record }) => {
      const current = await offer('available');
      expect(acceptInDatabase(current.id, 'ln_repaid', await env.currentTimeMs())).toBe(true);
      loansEnded.set('ln_repaid', 'finished'); // repaid, and its loanFinished lost too
      await env.sleep(VALIDITY + RENEWAL + DAY);
      const next = await offer('available');
      expect(next.id).not.toBe(current.id);
      expect(statuses(writes)).toEqual([
        'issue:available',
        'move:accepted',
        'spent:',
        'issue:available',
      ]);
      await record('acceptance-and-repayment-lost-spent-from-records', 'first');
    });
  });

  it('a loan’s acceptance that never arrives: its repayment still spends the offer, and a new one follows', async () => {
    await withCreditOffers({}, async ({ handle, offer, acceptInDatabase, writes, record }) => {
      const current = await offer('available');
      expect(acceptInDatabase(current.id, 'ln_unheard', await env.currentTimeMs())).toBe(true);
      await env.sleep(DAY);
      await handle.signal(loanFinishedSignal, { offerId: current.id, loanId: 'ln_unheard' });
      await env.sleep(RENEWAL + DAY);
      const next = await offer('available');
      expect(next.id).not.toBe(current.id);
      expect(statuses(writes)).toEqual([
        'issue:available',
        'move:accepted',
        'spent:',
        'issue:available',
      ]);
      await record('acceptance-lost-repayment-spends-offer', 'first');
    });
  });

  it('continues as new inside a long wait: an accepted offer’s history stays bounded', async () => {
    await withCreditOffers(
      { historyLimit: 40 },
      async ({ handle, offer, accept, writes, record }) => {
        const current = await offer('available');
        expect(await accept(current.id, 'ln_long')).toBe(true);
        await offer('accepted');
        const firstRun = (await handle.describe()).runId;
        // A loan's years, squeezed: messages the offer has no use for keep arriving.
        for (let i = 0; i < 30; i++)
          await handle.signal(offerAcceptedSignal, { offerId: current.id, loanId: 'ln_long' });
        await env.sleep(1_000);
        const later = await handle.describe();
        expect(later.runId).not.toBe(firstRun);
        expect(later.status.name).toBe('RUNNING');
        // Every run of the chain stayed near the limit.
        const sizes = (await runsOf(env.client.workflow, handle.workflowId)).map(
          (run) => run.events,
        );
        expect(sizes.length).toBeGreaterThan(1);
        expect(Math.max(...sizes)).toBeLessThan(80);
        // The carried offer is still accepted by its loan, and the loan's release reaches it.
        expect(await offer('accepted')).toMatchObject({ id: current.id, loanId: 'ln_long' });
        await handle.signal(releaseOfferSignal, {
          offerId: current.id,
          loanId: 'ln_long',
          reason: 'loan_cancelled',
        });
        await offer('available');
        expect(statuses(writes)).toEqual(['issue:available', 'move:accepted', 'move:available']);
        await record('accepted-wait-first-run-continued-as-new', 'first');
        await record('accepted-wait-continued-run-released');
      },
    );
  });

  it('does not expire an accepted offer; a release while valid makes it available again', async () => {
    await withCreditOffers({}, async ({ handle, offer, accept, writes, record }) => {
      const current = await offer('available');
      const loanId = 'ln_1';
      await accept(current.id, loanId);
      await env.sleep(DAY);
      await handle.signal(releaseOfferSignal, {
        offerId: current.id,
        loanId: 'ln_other',
        reason: 'loan_cancelled',
      }); // not its loan: ignored
      await handle.signal(releaseOfferSignal, {
        offerId: current.id,
        loanId,
        reason: 'loan_cancelled',
      });
      expect((await offer('available')).id).toBe(current.id);
      expect(statuses(writes)).toEqual(['issue:available', 'move:accepted', 'move:available']);
      // …and it still expires at its own valid_until (then renews a day later).
      await env.sleep(VALIDITY - DAY + 60_000);
      expect((await offer('expired')).id).toBe(current.id);
      const expired = writes.at(-1)!;
      expect(expired.status).toBe('expired');
      expect(expired.at - current.validUntil).toBeLessThan(1_000);
      expect(expired.at).toBeGreaterThanOrEqual(current.validUntil);
      await record('accepted-released-available-then-expired');
    });
  });

  it('a release after valid_until expires the offer, and a new one follows', async () => {
    await withCreditOffers({}, async ({ handle, offer, accept, writes, record }) => {
      const current = await offer('available');
      await accept(current.id, 'ln_1');
      await env.sleep(VALIDITY + DAY); // accepted offers are not expired by the timer
      expect(statuses(writes)).toEqual(['issue:available', 'move:accepted']);
      await handle.signal(releaseOfferSignal, {
        offerId: current.id,
        loanId: 'ln_1',
        reason: 'loan_error',
      });
      await offer('expired');
      await env.sleep(RENEWAL + 60_000);
      const next = await offer('available');
      expect(next.id).not.toBe(current.id);
      expect(statuses(writes)).toEqual([
        'issue:available',
        'move:accepted',
        'move:expired',
        'issue:available',
      ]);
      await record('accepted-released-after-validity-expired-renewal', 'first');
    });
  });

  it('renews after the offer’s loan is repaid', async () => {
    await withCreditOffers({}, async ({ handle, offer, accept, writes, record }) => {
      const current = await offer('available');
      await accept(current.id, 'ln_1');
      await handle.signal(loanFinishedSignal, { offerId: current.id, loanId: 'ln_1' });
      await env.sleep(RENEWAL + 60_000);
      const next = await offer('available');
      expect(next.id).not.toBe(current.id);
      expect(statuses(writes)).toEqual([
        'issue:available',
        'move:accepted',
        'spent:',
        'issue:available',
      ]);
      await record('accepted-loan-finished-renewal', 'first');
    });
  });

  it('cancels an available offer when the customer is denied, and ends', async () => {
    await withCreditOffers({}, async ({ handle, customerId, offer, writes, record }) => {
      await offer('available');
      await handle.signal(customerDeniedSignal, { customerId });
      expect(await handle.result()).toBe('customer_denied');
      expect(statuses(writes)).toEqual(['issue:available', 'move:cancelled']);
      await record('available-customer-denied');
    });
  });

  it('a denied customer’s accepted offer is cancelled when its loan is released, not renewed', async () => {
    await withCreditOffers({}, async ({ handle, customerId, offer, accept, writes, record }) => {
      const current = await offer('available');
      await accept(current.id, 'ln_1');
      await handle.signal(customerDeniedSignal, { customerId });
      await handle.signal(releaseOfferSignal, {
        offerId: current.id,
        loanId: 'ln_1',
        reason: 'loan_cancelled',
      });
      expect(await handle.result()).toBe('customer_denied');
      expect(statuses(writes)).toEqual(['issue:available', 'move:accepted', 'move:cancelled']);
      await record('accepted-customer-denied-released-cancelled');
    });
  });

  it('a denial during the renewal delay ends the workflow without a new offer', async () => {
    await withCreditOffers({}, async ({ handle, customerId, offer, writes, record }) => {
      await offer('available');
      await env.sleep(VALIDITY + 60_000);
      await offer('expired');
      await handle.signal(customerDeniedSignal, { customerId });
      expect(await handle.result()).toBe('customer_denied');
      expect(statuses(writes)).toEqual(['issue:available', 'move:expired']);
      await record('expired-customer-denied-during-renewal');
    });
  });

  it('ignores a denial that does not name its customer (a signal sent bare, as one forged at the frontend is), then takes the API’s (issue 37)', async () => {
    await withCreditOffers({}, async ({ handle, customerId, offer, writes, record }) => {
      const current = await offer('available');
      await handle.signal(customerDeniedSignal.name);
      await handle.signal(customerDeniedSignal, { customerId: 'cust_someone_else' });
      // Still offering: the bare signals changed nothing.
      await env.sleep(60_000);
      expect(await offer('available')).toEqual(current);
      expect(statuses(writes)).toEqual(['issue:available']);
      await handle.signal(customerDeniedSignal, { customerId });
      expect(await handle.result()).toBe('customer_denied');
      expect(statuses(writes)).toEqual(['issue:available', 'move:cancelled']);
      await record('bare-denial-ignored-then-denied');
    });
  });

  it('an acceptance racing the expiry timer: the offer ends accepted or expired, never both', async () => {
    await withCreditOffers({}, async ({ offer, accept, writes }) => {
      const current = await offer('available');
      await env.sleep(VALIDITY - 1);
      const accepted = await accept(current.id);
      await env.sleep(60_000);
      const moves = writes.filter((w) => w.kind === 'move').map((w) => w.status);
      expect(moves).toEqual([accepted ? 'accepted' : 'expired']);
      expect((await offer()).status).toBe(accepted ? 'accepted' : 'expired');
    });
  });

  it('ends without an offer for a customer who is not eligible', async () => {
    await withCreditOffers({ eligible: false }, async ({ handle, writes, record }) => {
      expect(await handle.result()).toBe('not_eligible');
      expect(writes).toEqual([]);
      await record('not-eligible');
    });
  });
});
