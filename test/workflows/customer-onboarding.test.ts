import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { timeSkippingEnvironment } from '../helpers/time-skipping.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { Activities } from '../../activities/index.js';
import { initialKyc, type KycState } from '../../src/domain/customers/kyc.js';
import {
  completeBiometricsUpdate,
  correctDataUpdate,
  denyUpdate,
  openBiometricsUpdate,
  reviewUpdate,
  stateQuery,
  submitDocumentUpdate,
  type OnboardingInput,
} from '../../workflows/customer-onboarding/messages.js';
import { customerOnboardingWorkflow } from '../../workflows/index.js';
import { recordHistory } from '../helpers/histories.js';

type Persisted = Parameters<Activities['persistCustomerChange']>[0];

/** Activities that record what the workflow asked for, in order. */
function recordingActivities(facts: { customerName: string; fileNames: Record<string, string> }) {
  const calls: { name: string; input: unknown }[] = [];
  const persisted: Persisted[] = [];
  const activities: Pick<
    Activities,
    | 'runCreditAnalysis'
    | 'persistCustomerChange'
    | 'loadSandboxReviewFacts'
    | 'openBiometricsSession'
    | 'expireBiometricsSession'
  > = {
    runCreditAnalysis: async (input) => {
      calls.push({ name: 'runCreditAnalysis', input });
      return 'approved' as const;
    },
    persistCustomerChange: async (input) => {
      calls.push({ name: 'persistCustomerChange', input });
      persisted.push(input);
    },
    loadSandboxReviewFacts: async () => {
      calls.push({ name: 'loadSandboxReviewFacts', input: null });
      return facts;
    },
    openBiometricsSession: async (input) =>
      void calls.push({ name: 'openBiometricsSession', input }),
    expireBiometricsSession: async (input) =>
      void calls.push({ name: 'expireBiometricsSession', input }),
  };
  const eventTypes = () => persisted.flatMap((p) => p.events.map((e) => e.type));
  return { activities, calls, persisted, eventTypes };
}

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
});
afterAll(async () => {
  await env?.teardown();
});

const documents = ['identity_card_front', 'identity_card_back', 'selfie'];

async function withOnboarding(
  options: {
    sandboxReviewDelayMs?: number | null;
    name?: string;
    fileNames?: Record<string, string>;
    cnpj?: boolean;
    historyLimit?: number;
  },
  body: (ctx: {
    handle: WorkflowHandle<typeof customerOnboardingWorkflow>;
    recorded: ReturnType<typeof recordingActivities>;
    upload: (type: string, fileName?: string) => Promise<void>;
    captureBiometrics: () => Promise<string>;
    state: () => Promise<KycState>;
    waitFor: (predicate: (state: KycState) => boolean) => Promise<KycState>;
    /** Saves the chain's latest run (or its first) for the replay test. */
    record: (caseName: string, run?: 'first' | 'latest') => Promise<void>;
  }) => Promise<void>,
) {
  const recorded = recordingActivities({
    customerName: options.name ?? 'Maria Silva',
    fileNames: options.fileNames ?? {},
  });
  const taskQueue = `onboarding-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities: recorded.activities,
  });
  const customerId = `cust_${randomUUID().replaceAll('-', '')}`;
  const input: OnboardingInput = {
    customerId,
    partnerId: 'ptn_test',
    environment: 'sandbox',
    externalId: 'ext-1',
    initial: { status: 'pending_kyc', kyc: initialKyc(options.cnpj ?? false) },
    sandboxReviewDelayMs: options.sandboxReviewDelayMs ?? null,
    ...(options.historyLimit ? { historyLimit: options.historyLimit } : {}),
  };
  await worker.runUntil(async () => {
    const handle = await env.client.workflow.start(customerOnboardingWorkflow, {
      workflowId: `customer-onboarding/${customerId}`,
      taskQueue,
      args: [input],
    });
    const state = () => handle.query(stateQuery);
    const at = () => new Date().toISOString();
    await body({
      handle,
      recorded,
      state,
      async record(caseName, run = 'latest') {
        const runId = run === 'first' ? handle.firstExecutionRunId : undefined;
        await recordHistory(
          env.client.workflow.getHandle(handle.workflowId, runId),
          'customer-onboarding',
          caseName,
        );
      },
      upload: (type, fileName = `${type}.pdf`) =>
        handle.executeUpdate(submitDocumentUpdate, {
          args: [
            {
              documentId: `doc_${randomUUID().replaceAll('-', '')}`,
              type,
              fileName,
              contentType: 'application/pdf',
              sizeBytes: 10,
              sha256: '0'.repeat(64),
              storageKey: 'k',
              uploadedAt: at(),
            },
          ],
        }),
      async captureBiometrics() {
        const sessionId = `bio_${randomUUID().replaceAll('-', '')}`;
        const expiresAt = new Date((await env.currentTimeMs()) + 15 * 60_000).toISOString();
        await handle.executeUpdate(openBiometricsUpdate, {
          args: [{ sessionId, tokenHash: randomUUID(), expiresAt }],
        });
        await handle.executeUpdate(completeBiometricsUpdate, {
          args: [{ sessionId, completedAt: at() }],
        });
        return sessionId;
      },
      async waitFor(predicate) {
        for (let i = 0; i < 200; i++) {
          const current = await state();
          if (predicate(current)) return current;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        throw new Error(`state never matched; last: ${JSON.stringify(await state())}`);
      },
    });
    if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('test over');
  });
}

async function expectRejected(update: Promise<unknown>, type: string) {
  const error = await update.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe(type);
}

const itemStatus = (state: KycState, type: string) =>
  state.kyc.find((item) => item.type === type)?.status;

describe('customerOnboardingWorkflow', () => {
  it('continues as new when its history grows, carrying the state, the analysis and the review clocks', async () => {
    await withOnboarding(
      { historyLimit: 25, sandboxReviewDelayMs: 60_000 },
      async ({ upload, captureBiometrics, state, handle, recorded, record }) => {
        const firstRun = (await handle.describe()).runId;
        for (const type of documents) await upload(type);
        await captureBiometrics();
        // Every item is submitted in whichever run holds the state now.
        const submitted = await state();
        expect(submitted.status).toBe('under_review');
        // The sandbox review still comes due a delay after each submission, in the new run.
        await env.sleep(61_000);
        const reviewed = await state();
        expect(reviewed.status).toBe('active');
        expect((await handle.describe()).runId).not.toBe(firstRun);
        expect(recorded.calls.filter((c) => c.name === 'runCreditAnalysis')).toHaveLength(1);
        const types = recorded.eventTypes();
        expect(types.filter((t) => t === 'customer.active')).toHaveLength(1);
        expect(types.filter((t) => t === 'customer.under_review')).toHaveLength(1);
        await record('continued-as-new-first-run', 'first');
        await record('continued-as-new-later-run-sandbox-review-to-active');
      },
    );
  });

  it('runs the credit analysis, then moves pending_kyc → under_review → active as items are submitted and approved', async () => {
    await withOnboarding(
      {},
      async ({ upload, captureBiometrics, state, handle, recorded, record }) => {
        for (const type of documents) await upload(type);
        expect((await state()).status).toBe('pending_kyc');
        await captureBiometrics();
        expect((await state()).status).toBe('under_review');
        expect(recorded.eventTypes().slice(-2)).toEqual([
          'customer.kyc_updated',
          'customer.under_review',
        ]);

        await handle.executeUpdate(reviewUpdate, {
          args: [
            {
              items: [...documents, 'biometrics'].map((type) => ({
                type,
                decision: 'approve' as const,
              })),
            },
          ],
        });
        const active = await state();
        expect(active.status).toBe('active');
        expect(active.kyc.every((item) => item.status === 'approved')).toBe(true);
        expect(recorded.eventTypes().slice(-2)).toEqual([
          'customer.kyc_updated',
          'customer.active',
        ]);
        expect(recorded.calls.filter((c) => c.name === 'runCreditAnalysis')).toHaveLength(1);
        // The approvals reached the documents awaiting review.
        expect(recorded.persisted.at(-1)!.settle).toEqual({
          approved: [...documents, 'biometrics'],
          rejected: [],
        });
        // Each event has its own id, and every change wrote its events with it.
        const ids = recorded.persisted.flatMap((p) => p.events.map((e) => e.id));
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.every((id) => /^evt_[0-9a-f]{32}$/.test(id))).toBe(true);
        await record('ops-review-to-active');
      },
    );
  });

  it('sends a rejected document back for resubmission, and the customer back to pending_kyc', async () => {
    await withOnboarding(
      {},
      async ({ upload, captureBiometrics, state, handle, recorded, record }) => {
        for (const type of documents) await upload(type);
        await captureBiometrics();
        await handle.executeUpdate(reviewUpdate, {
          args: [{ items: [{ type: 'selfie', decision: 'reject', message: 'Face not visible.' }] }],
        });
        const rejected = await state();
        expect(rejected.status).toBe('pending_kyc');
        expect(rejected.kyc.find((i) => i.type === 'selfie')).toMatchObject({
          status: 'pending_resubmission',
          message: 'Face not visible.',
        });
        expect(recorded.persisted.at(-1)!.settle).toEqual({ approved: [], rejected: ['selfie'] });

        await upload('selfie');
        expect((await state()).status).toBe('under_review');
        expect(itemStatus(await state(), 'selfie')).toBe('submitted');
        await record('document-rejected-then-resubmitted');
      },
    );
  });

  it('asks for a data correction, which a changed field resubmits', async () => {
    await withOnboarding({}, async ({ upload, captureBiometrics, state, handle, record }) => {
      for (const type of documents) await upload(type);
      await captureBiometrics();
      await handle.executeUpdate(reviewUpdate, {
        args: [{ items: [{ type: 'email', decision: 'request_correction' }] }],
      });
      const asked = await state();
      expect(asked.status).toBe('pending_kyc');
      expect(asked.kyc.at(-1)).toMatchObject({
        kind: 'data',
        type: 'email',
        status: 'pending_correction',
      });

      await handle.executeUpdate(correctDataUpdate, {
        args: [{ fields: { email: 'new@example.com' }, at: new Date().toISOString() }],
      });
      expect(itemStatus(await state(), 'email')).toBe('submitted');
      expect((await state()).status).toBe('under_review');
      await record('data-correction-then-resubmitted');
    });
  });

  for (const stage of ['pending_kyc', 'under_review', 'active'] as const) {
    it(`denies from ${stage}, finally`, async () => {
      await withOnboarding(
        {},
        async ({ upload, captureBiometrics, state, handle, recorded, record }) => {
          if (stage !== 'pending_kyc') {
            for (const type of documents) await upload(type);
            await captureBiometrics();
          }
          if (stage === 'active') {
            await handle.executeUpdate(reviewUpdate, {
              args: [
                {
                  items: [...documents, 'biometrics'].map((type) => ({
                    type,
                    decision: 'approve' as const,
                  })),
                },
              ],
            });
          }
          expect((await state()).status).toBe(stage);
          await handle.executeUpdate(denyUpdate, { args: [{ reason: 'Fraud suspected.' }] });
          const result = await handle.result();
          expect(result.status).toBe('denied');
          const denied = recorded.persisted.at(-1)!;
          expect(denied.deniedReason).toBe('Fraud suspected.');
          expect(denied.events.map((e) => e.type)).toEqual(['customer.denied']);
          expect(denied.events[0]!.data).toMatchObject({
            status: 'denied',
            reason: 'Fraud suspected.',
            external_id: 'ext-1',
          });
          await record(`denied-from-${stage.replaceAll('_', '-')}`);
        },
      );
    });
  }

  it('refuses uploads of unknown types and of items not open, without recording anything', async () => {
    await withOnboarding({ cnpj: true }, async ({ upload, recorded }) => {
      await expectRejected(upload('passport'), 'unknown_type');
      await upload('ccmei');
      const writes = recorded.persisted.length;
      await expectRejected(upload('ccmei'), 'invalid_state');
      expect(recorded.persisted).toHaveLength(writes);
    });
  });

  it('lets a CNH stand in for both identity-card items while neither was submitted', async () => {
    await withOnboarding({}, async ({ upload, state }) => {
      await upload('cnh');
      const types = (await state()).kyc.map((item) => `${item.type}:${item.status}`);
      expect(types).toEqual(['cnh:submitted', 'selfie:pending', 'biometrics:pending']);
    });
    await withOnboarding({}, async ({ upload }) => {
      await upload('identity_card_front');
      await expectRejected(upload('cnh'), 'invalid_state');
    });
  });

  it('expires a biometrics session after 15 minutes on a durable timer; a new one works', async () => {
    await withOnboarding({}, async ({ handle, recorded, captureBiometrics, state, record }) => {
      const sessionId = `bio_${randomUUID().replaceAll('-', '')}`;
      const expiresAt = new Date((await env.currentTimeMs()) + 15 * 60_000).toISOString();
      await handle.executeUpdate(openBiometricsUpdate, {
        args: [{ sessionId, tokenHash: 'h', expiresAt }],
      });
      await env.sleep(16 * 60_000);
      await expectRejected(
        handle.executeUpdate(completeBiometricsUpdate, {
          args: [{ sessionId, completedAt: new Date().toISOString() }],
        }),
        'invalid_state',
      );
      expect(
        recorded.calls.filter((c) => c.name === 'expireBiometricsSession').map((c) => c.input),
      ).toEqual([{ tenant: { partnerId: 'ptn_test', environment: 'sandbox' }, sessionId }]);
      expect(itemStatus(await state(), 'biometrics')).toBe('pending');

      await captureBiometrics();
      expect(itemStatus(await state(), 'biometrics')).toBe('submitted');
      await record('biometrics-session-expired-then-captured');
    });
  });

  it('superseded biometrics sessions cannot complete', async () => {
    await withOnboarding({}, async ({ handle }) => {
      const expiresAt = new Date((await env.currentTimeMs()) + 15 * 60_000).toISOString();
      await handle.executeUpdate(openBiometricsUpdate, {
        args: [{ sessionId: 'bio_old', tokenHash: 'a', expiresAt }],
      });
      await handle.executeUpdate(openBiometricsUpdate, {
        args: [{ sessionId: 'bio_new', tokenHash: 'b', expiresAt }],
      });
      await expectRejected(
        handle.executeUpdate(completeBiometricsUpdate, {
          args: [{ sessionId: 'bio_old', completedAt: new Date().toISOString() }],
        }),
        'invalid_state',
      );
    });
  });

  describe('in the sandbox', () => {
    it('approves submitted items SANDBOX_REVIEW_DELAY after submission, not before', async () => {
      await withOnboarding(
        { sandboxReviewDelayMs: 10_000 },
        async ({ upload, captureBiometrics, state, waitFor, recorded }) => {
          for (const type of documents) await upload(type);
          await captureBiometrics();
          await env.sleep(5_000);
          expect((await state()).status).toBe('under_review');
          expect(recorded.calls.some((c) => c.name === 'loadSandboxReviewFacts')).toBe(false);
          await env.sleep(6_000);
          const active = await waitFor((s) => s.status === 'active');
          expect(active.kyc.every((item) => item.status === 'approved')).toBe(true);
          expect(recorded.eventTypes().at(-1)).toBe('customer.active');
        },
      );
    });

    it('rejects a file whose name contains "reject"', async () => {
      await withOnboarding(
        { sandboxReviewDelayMs: 10_000, fileNames: { selfie: 'selfie-reject.png' } },
        async ({ upload, waitFor, record }) => {
          await upload('selfie', 'selfie-reject.png');
          await env.sleep(11_000);
          const reviewed = await waitFor((s) => itemStatus(s, 'selfie') !== 'submitted');
          expect(reviewed.kyc.find((i) => i.type === 'selfie')).toMatchObject({
            status: 'pending_resubmission',
          });
          expect(reviewed.status).toBe('pending_kyc');
          await record('sandbox-review-rejects-document');
        },
      );
    });

    it('denies a customer named with [deny] at review', async () => {
      await withOnboarding(
        { sandboxReviewDelayMs: 10_000, name: 'Test [deny]' },
        async ({ upload, handle, record }) => {
          await upload('selfie');
          await env.sleep(11_000);
          expect((await handle.result()).status).toBe('denied');
          await record('sandbox-review-denies');
        },
      );
    });

    it('asks once for an e-mail correction for [correct-email], then approves the corrected e-mail', async () => {
      await withOnboarding(
        { sandboxReviewDelayMs: 10_000, name: 'Test [correct-email]' },
        async ({ upload, captureBiometrics, handle, waitFor, record }) => {
          for (const type of documents) await upload(type);
          await captureBiometrics();
          await env.sleep(11_000);
          const asked = await waitFor((s) => itemStatus(s, 'email') === 'pending_correction');
          expect(asked.status).toBe('pending_kyc');
          await handle.executeUpdate(correctDataUpdate, {
            args: [{ fields: { email: 'fixed@example.com' }, at: new Date().toISOString() }],
          });
          await env.sleep(11_000);
          const active = await waitFor((s) => s.status === 'active');
          expect(itemStatus(active, 'email')).toBe('approved');
          await record('sandbox-email-correction-to-active');
        },
      );
    });
  });
});
