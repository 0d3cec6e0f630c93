import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  proxyActivities,
  setCurrentDetails,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { customerEvents } from '../../src/domain/customers/events.js';
import {
  correctData,
  deny,
  KycRuleError,
  review,
  setCompany,
  submitDocument,
  type KycState,
  type ReviewItem,
} from '../../src/domain/customers/kyc.js';
import { sandboxReview } from '../../src/domain/customers/sandbox.js';
import { hexId } from '../ids.js';
import { databaseWrite } from '../presets.js';
import { stepQueue } from '../step-queue.js';
import {
  completeBiometricsUpdate,
  correctDataUpdate,
  denyUpdate,
  openBiometricsUpdate,
  reviewUpdate,
  stateQuery,
  submitDocumentUpdate,
  type CustomerFieldChanges,
  type OnboardingInput,
  type SubmittedDocument,
} from './messages.js';
import { customerClock } from '../clock.js';
import { historyFull } from '../history.js';

const {
  runCreditAnalysis,
  persistCustomerChange,
  loadSandboxReviewFacts,
  openBiometricsSession,
  expireBiometricsSession,
} = proxyActivities<Activities>(databaseWrite);

/**
 * One per customer, from registration for as long as the customer is not denied. The only writer of
 * the customer's status and KYC items: every change is computed here with the pure KYC rules and
 * written, with its events, by one activity in one transaction. Partner and ops actions arrive as
 * Updates (answered once written); waits are durable timers (sandbox review, biometrics expiry).
 */
export async function customerOnboardingWorkflow(input: OnboardingInput): Promise<KycState> {
  const tenant = { partnerId: input.partnerId, environment: input.environment };
  const clock = customerClock(input.customerId, input.clock);
  const ref = { id: input.customerId, external_id: input.externalId };
  let state: KycState = input.initial;
  /** Workflow time at which each item became submitted: the sandbox reviews it a delay later. */
  const submittedAt = new Map<string, number>(input.carried?.submittedAt);
  let biometrics: { sessionId: string; expiresAt: number } | undefined = input.carried?.biometrics;
  let changed = false;
  const final = () => state.status === 'denied';

  // Handlers run one at a time: each sees the state the previous one left.
  const serialized = stepQueue();

  /** Computes a change, writes it with its events, then adopts it. */
  const apply = (
    compute: (current: KycState) => KycState,
    extras: Omit<
      Parameters<typeof persistCustomerChange>[0],
      'tenant' | 'customerId' | 'state' | 'events'
    > = {},
  ) =>
    serialized(async () => {
      const before = state;
      const after = rule(() => compute(before));
      const events = customerEvents(ref, before, after, extras.deniedReason).map((event) => ({
        ...event,
        id: hexId('evt'),
      }));
      await persistCustomerChange({
        tenant,
        customerId: input.customerId,
        state: after,
        events,
        settle: settledDocuments(before, after),
        ...extras,
      });
      state = after;
      const now = clock.now();
      for (const item of after.kyc) {
        if (item.status !== 'submitted') submittedAt.delete(item.type);
        else if (!submittedAt.has(item.type)) submittedAt.set(item.type, now);
      }
      changed = true;
      showDetails();
    });

  let creditAnalysis = input.carried?.creditAnalysis ?? 'running';
  /** What ops see for this workflow in the Temporal UI: status, analysis and every item. */
  const showDetails = () =>
    setCurrentDetails(
      [
        `**Status:** ${state.status} · **Credit analysis:** ${creditAnalysis}`,
        '',
        '| KYC item | status |',
        '|---|---|',
        ...state.kyc.map((item) => `| ${item.type} | ${item.status} |`),
      ].join('\n'),
    );
  showDetails();

  setHandler(stateQuery, () => state);

  setHandler(
    submitDocumentUpdate,
    (document) => apply((s) => submitDocument(s, document.type, document.uploadedAt), { document }),
    {
      validator: (document: SubmittedDocument) =>
        void rule(() => submitDocument(state, document.type, document.uploadedAt)),
    },
  );

  setHandler(
    openBiometricsUpdate,
    (session) =>
      serialized(async () => {
        rule(() => submitDocument(state, 'biometrics', session.expiresAt));
        await openBiometricsSession({ tenant, customerId: input.customerId, ...session });
        biometrics = { sessionId: session.sessionId, expiresAt: Date.parse(session.expiresAt) };
        changed = true;
      }),
    {
      validator: (session: { expiresAt: string }) =>
        void rule(() => submitDocument(state, 'biometrics', session.expiresAt)),
    },
  );

  setHandler(
    completeBiometricsUpdate,
    async ({ sessionId, completedAt }) => {
      assertLiveSession(sessionId);
      await apply((s) => submitDocument(s, 'biometrics', completedAt), {
        completedSessionId: sessionId,
      });
      biometrics = undefined;
    },
    {
      validator: ({ sessionId, completedAt }: { sessionId: string; completedAt: string }) => {
        assertLiveSession(sessionId);
        rule(() => submitDocument(state, 'biometrics', completedAt));
      },
    },
  );

  setHandler(reviewUpdate, ({ items }) => apply((s) => review(s, items)), {
    validator: ({ items }: { items: ReviewItem[] }) => void rule(() => review(state, items)),
  });

  setHandler(denyUpdate, ({ reason }) => apply((s) => deny(s), { deniedReason: reason }), {
    validator: (_input: { reason: string }) => void rule(() => deny(state)),
  });

  const correct = (current: KycState, fields: CustomerFieldChanges, at: string) => {
    const corrected = correctData(current, Object.keys(fields), at);
    return 'cnpj' in fields ? setCompany(corrected, fields.cnpj != null) : corrected;
  };
  setHandler(
    correctDataUpdate,
    ({ fields, at }) => apply((s) => correct(s, fields, at), { fields }),
    {
      validator: ({ fields, at }: { fields: CustomerFieldChanges; at: string }) =>
        void rule(() => correct(state, fields, at)),
    },
  );

  function assertLiveSession(sessionId: string): void {
    if (!biometrics || biometrics.sessionId !== sessionId || Date.now() >= biometrics.expiresAt) {
      throw ApplicationFailure.create({
        type: 'invalid_state',
        message: 'This biometrics session has expired or been replaced by a newer one.',
        nonRetryable: true,
      });
    }
  }

  if (!input.carried)
    creditAnalysis = await runCreditAnalysis({ tenant, customerId: input.customerId });
  showDetails();

  while (!final()) {
    // An active customer's workflow lives for years: start a fresh history before it grows large,
    // carrying only the state (items, review clocks, the open biometrics session).
    if (historyFull(input.historyLimit)) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof customerOnboardingWorkflow>({
        ...input,
        initial: state,
        carried: {
          submittedAt: [...submittedAt],
          creditAnalysis,
          ...(biometrics ? { biometrics } : {}),
        },
        clock: clock.state(),
      });
    }
    // Reviews fall due on the customer's clock; a biometrics link expires in real time.
    const wakeAt = nextWake(submittedAt, input.sandboxReviewDelayMs, biometrics, clock.now());
    changed = false;
    await clock.until(wakeAt ?? null, () => changed || final());
    if (final()) break;

    const now = clock.now();
    if (biometrics && Date.now() >= biometrics.expiresAt) {
      const expired = biometrics.sessionId;
      biometrics = undefined;
      await serialized(() => expireBiometricsSession({ tenant, sessionId: expired }));
    }
    const delay = input.sandboxReviewDelayMs;
    if (delay !== null) {
      const due = [...submittedAt].filter(([, at]) => at + delay <= now).map(([type]) => type);
      if (due.length > 0) await sandboxAutoReview(due);
    }
  }
  await condition(allHandlersFinished);
  await clock.settled();
  return state;

  async function sandboxAutoReview(types: string[]): Promise<void> {
    const facts = await loadSandboxReviewFacts({ tenant, customerId: input.customerId });
    const outcome = sandboxReview({
      customerName: facts.customerName,
      submitted: state.kyc
        .filter((item) => types.includes(item.type) && item.status === 'submitted')
        .map((item) => ({
          type: item.type,
          kind: item.kind,
          fileName: facts.fileNames[item.type] ?? null,
        })),
      emailCorrectionRequested: state.kyc.some(
        (item) => item.kind === 'data' && item.type === 'email',
      ),
    });
    if ('deny' in outcome) await apply((s) => deny(s), { deniedReason: outcome.deny });
    else await apply((s) => review(s, outcome.decisions));
  }
}

/** The next moment (on the customer's clock, which reads `now`) a timer must wake the workflow. */
function nextWake(
  submittedAt: Map<string, number>,
  sandboxReviewDelayMs: number | null,
  biometrics: { expiresAt: number } | undefined,
  now: number,
): number | undefined {
  const times: number[] = [];
  if (sandboxReviewDelayMs !== null)
    for (const at of submittedAt.values()) times.push(at + sandboxReviewDelayMs);
  if (biometrics) times.push(biometrics.expiresAt + (now - Date.now()));
  return times.length > 0 ? Math.min(...times) : undefined;
}

/** Review outcomes reach the documents: approved, or rejected when the item must be resubmitted. */
function settledDocuments(
  before: KycState,
  after: KycState,
): { approved: string[]; rejected: string[] } {
  const approved: string[] = [];
  const rejected: string[] = [];
  for (const item of after.kyc) {
    const previous = before.kyc.find((candidate) => candidate.type === item.type);
    if (item.kind !== 'document' || previous?.status !== 'submitted') continue;
    if (item.status === 'approved') approved.push(item.type);
    if (item.status === 'pending_resubmission') rejected.push(item.type);
  }
  return { approved, rejected };
}

/** KYC rule errors leave the workflow as non-retryable failures typed with their code. */
function rule<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof KycRuleError) {
      throw ApplicationFailure.create({
        type: error.code,
        message: error.message,
        nonRetryable: true,
      });
    }
    throw error;
  }
}
