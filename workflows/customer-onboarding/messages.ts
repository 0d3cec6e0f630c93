import type { ClockState } from '../sandbox-clock/messages.js';
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { KycState, ReviewItem } from '../../src/domain/customers/kyc.js';
import type { Environment } from '../../src/domain/environments.js';

/**
 * The contract of a customer's onboarding workflow (`customer-onboarding/{cust_id}`): its input
 * and the Updates the API sends it. Imported by both sides, so the API never imports the workflow.
 */
export interface OnboardingInput {
  customerId: string;
  partnerId: string;
  environment: Environment;
  externalId: string | null;
  initial: KycState;
  /** Sandbox customers are reviewed automatically after this delay. */
  sandboxReviewDelayMs: number | null;
  /** What a run hands the next across continue-as-new (with `initial` = the state it reached). */
  carried?: {
    /** Item type → workflow time it became submitted. */
    submittedAt: [string, number][];
    creditAnalysis: string;
    biometrics?: { sessionId: string; expiresAt: number };
  };
  /** The customer's sandbox clock (absent: real time). */
  clock?: ClockState;
  /** Events after which a run continues as new (default 5,000; tests lower it). */
  historyLimit?: number;
}

export interface SubmittedDocument {
  documentId: string;
  type: string;
  fileName: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  storageKey: string;
  uploadedAt: string;
}

export interface CustomerFieldChanges {
  email?: string;
  phone?: string;
  name?: string;
  trading_name?: string | null;
  cnpj?: string | null;
}

export const submitDocumentUpdate = defineUpdate<void, [SubmittedDocument]>('submitDocument');
export const openBiometricsUpdate = defineUpdate<
  void,
  [{ sessionId: string; tokenHash: string; expiresAt: string }]
>('openBiometricsSession');
export const completeBiometricsUpdate = defineUpdate<
  void,
  [{ sessionId: string; completedAt: string }]
>('completeBiometrics');
export const reviewUpdate = defineUpdate<void, [{ items: ReviewItem[] }]>('review');
export const denyUpdate = defineUpdate<void, [{ reason: string }]>('deny');
export const correctDataUpdate = defineUpdate<void, [{ fields: CustomerFieldChanges; at: string }]>(
  'correctData',
);
export const stateQuery = defineQuery<KycState>('state');
