import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { activityInfo } from '@temporalio/activity';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
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

const DAY = 86_400_000;
const VALIDITY = 30 * DAY;
const RENEWAL = DAY;

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: inject('testServerExecutable') },
  });
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
      if (row.status !== input.from.status || row.loanId !== input.from.loanId)
        return { status: row.status, loanId: row.loanId };
      writes.push({ kind: 'move', at, offerId: input.offerId, status: input.status });
      Object.assign(row, { status: input.status, loanId: input.loanId });
      return { status: row.status, loanId: row.loanId };
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
  return { activities, writes, acceptInDatabase };
}

async function withCreditOffers(
  options: { eligible?: boolean },
  body: (ctx: {
    handle: WorkflowHandle<typeof creditOffersWorkflow>;
    writes: Move[];
    /** The current offer once the workflow has one in the wanted status. */
    offer: (status?: string) => Promise<LiveOffer>;
    /** The API's transaction alone, with no signal. */
    acceptInDatabase: (offerId: string, loanId: string, now: number) => boolean;
    /** A loan takes the offer (the API's transaction, then the loan workflow's signal). */
    accept: (offerId: string, loanId?: string) => Promise<boolean>;
  }) => Promise<void>,
) {
  const { activities, writes, acceptInDatabase } = recordingActivities(options);
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
        writes,
        acceptInDatabase,
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
    await withCreditOffers({}, async ({ offer, accept, writes }) => {
      const current = await offer('available');
      const outcomes = [await accept(current.id), await accept(current.id)];
      expect(outcomes).toEqual([true, false]);
      expect((await offer('accepted')).id).toBe(current.id);
      await env.sleep(VALIDITY + DAY);
      expect(statuses(writes)).toEqual(['issue:available', 'move:accepted']);
      expect(await accept('co_unknown')).toBe(false);
    });
  });

  it('adopts an acceptance it has not heard of when its timer fires (the signal is late)', async () => {
    await withCreditOffers({}, async ({ handle, offer, acceptInDatabase, writes }) => {
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
    });
  });

  it('does not expire an accepted offer; a release while valid makes it available again', async () => {
    await withCreditOffers({}, async ({ handle, offer, accept, writes }) => {
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
    });
  });

  it('a release after valid_until expires the offer, and a new one follows', async () => {
    await withCreditOffers({}, async ({ handle, offer, accept, writes }) => {
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
    });
  });

  it('renews after the offer’s loan is repaid', async () => {
    await withCreditOffers({}, async ({ handle, offer, accept, writes }) => {
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
    });
  });

  it('cancels an available offer when the customer is denied, and ends', async () => {
    await withCreditOffers({}, async ({ handle, offer, writes }) => {
      await offer('available');
      await handle.signal(customerDeniedSignal);
      expect(await handle.result()).toBe('customer_denied');
      expect(statuses(writes)).toEqual(['issue:available', 'move:cancelled']);
    });
  });

  it('a denied customer’s accepted offer is cancelled when its loan is released, not renewed', async () => {
    await withCreditOffers({}, async ({ handle, offer, accept, writes }) => {
      const current = await offer('available');
      await accept(current.id, 'ln_1');
      await handle.signal(customerDeniedSignal);
      await handle.signal(releaseOfferSignal, {
        offerId: current.id,
        loanId: 'ln_1',
        reason: 'loan_cancelled',
      });
      expect(await handle.result()).toBe('customer_denied');
      expect(statuses(writes)).toEqual(['issue:available', 'move:accepted', 'move:cancelled']);
    });
  });

  it('a denial during the renewal delay ends the workflow without a new offer', async () => {
    await withCreditOffers({}, async ({ handle, offer, writes }) => {
      await offer('available');
      await env.sleep(VALIDITY + 60_000);
      await offer('expired');
      await handle.signal(customerDeniedSignal);
      expect(await handle.result()).toBe('customer_denied');
      expect(statuses(writes)).toEqual(['issue:available', 'move:expired']);
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
    await withCreditOffers({ eligible: false }, async ({ handle, writes }) => {
      expect(await handle.result()).toBe('not_eligible');
      expect(writes).toEqual([]);
    });
  });
});
