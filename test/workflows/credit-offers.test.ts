import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { activityInfo } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import {
  acceptOfferUpdate,
  currentOfferQuery,
  customerDeniedSignal,
  loanFinishedSignal,
  releaseOfferSignal,
  type CreditOffersInput,
  type LiveOffer,
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

/** Activities that record each write with the server time it was scheduled at. */
function recordingActivities(options: { eligible?: boolean }) {
  const writes: Move[] = [];
  const activities: Pick<Activities, 'issueOffer' | 'recordOfferMove' | 'recordOfferSpent'> = {
    async issueOffer(input) {
      const at = activityInfo().scheduledTimestampMs;
      if (options.eligible === false) return null;
      writes.push({ kind: 'issue', at, offerId: input.offerId, status: 'available' });
      return { validUntil: at + input.validityMs, approvedAmount: 1_000_000 };
    },
    async recordOfferMove(input) {
      const at = activityInfo().scheduledTimestampMs;
      writes.push({ kind: 'move', at, offerId: input.offerId, status: input.status });
    },
    async recordOfferSpent(input) {
      writes.push({
        kind: 'spent',
        at: activityInfo().scheduledTimestampMs,
        offerId: input.offerId,
      });
    },
  };
  return { activities, writes };
}

async function withCreditOffers(
  options: { eligible?: boolean },
  body: (ctx: {
    handle: WorkflowHandle<typeof creditOffersWorkflow>;
    writes: Move[];
    /** The current offer once the workflow has one in the wanted status. */
    offer: (status?: string) => Promise<LiveOffer>;
    accept: (offerId: string, loanId?: string) => Promise<void>;
  }) => Promise<void>,
) {
  const { activities, writes } = recordingActivities(options);
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
        accept: (offerId, loanId = `ln_${randomUUID().replaceAll('-', '')}`) =>
          handle.executeUpdate(acceptOfferUpdate, { args: [{ offerId, loanId }] }),
      });
    } finally {
      // A timer left behind would fire in a later test's skipped time with no worker to take it,
      // and hold the test server's clock.
      if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('test over');
    }
  });
}

/** The failure an Update was refused with, or undefined if it was accepted. */
async function refusal(update: Promise<void>): Promise<string | undefined> {
  try {
    await update;
    return undefined;
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure)
      return error.cause.type ?? 'untyped';
    throw error;
  }
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
      expect(renewed!.at - expired!.at).toBeGreaterThanOrEqual(RENEWAL);
      expect(renewed!.at - expired!.at).toBeLessThan(RENEWAL + 1_000);
    });
  });

  it('accepts an available offer once; a second acceptance is refused', async () => {
    await withCreditOffers({}, async ({ offer, accept, writes }) => {
      const current = await offer('available');
      const outcomes = await Promise.all([
        refusal(accept(current.id)),
        refusal(accept(current.id)),
        refusal(accept(current.id)),
      ]);
      expect(outcomes.filter((o) => o === undefined)).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'credit_offer_unavailable')).toHaveLength(2);
      expect(statuses(writes)).toEqual(['issue:available', 'move:accepted']);
      expect(await refusal(accept('co_unknown'))).toBe('credit_offer_unavailable');
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
      const outcome = await refusal(accept(current.id));
      await env.sleep(60_000);
      const moves = writes.filter((w) => w.kind === 'move').map((w) => w.status);
      if (outcome === undefined) expect(moves).toEqual(['accepted']);
      else {
        expect(outcome).toBe('credit_offer_unavailable');
        expect(moves).toEqual(['expired']);
      }
    });
  });

  it('ends without an offer for a customer who is not eligible', async () => {
    await withCreditOffers({ eligible: false }, async ({ handle, writes }) => {
      expect(await handle.result()).toBe('not_eligible');
      expect(writes).toEqual([]);
    });
  });
});
