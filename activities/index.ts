import type { Client } from '@temporalio/client';
import type { Db } from '../src/db/client.js';
import type { Logger } from '../src/logger.js';
import { createAgreementActivities } from './agreements.js';
import { createApprovalActivities } from './approvals.js';
import { createCreditOfferActivities } from './credit-offers.js';
import { createCustomerActivities } from './customers.js';
import { createCustomerDataActivities } from './customer-data.js';
import { createChargeActivities } from './charges.js';
import { createLoanActivities, type LoanActivityDeps } from './loans.js';
import { createPayoutActivities } from './payouts.js';
import { createPixActivities } from './pix.js';
import { createRefundActivities } from './refunds.js';
import { createRefinancingActivities } from './refinancing.js';
import { createReconciliationActivities } from './reconciliation.js';
import { createReminderActivities, type ReminderActivityDeps } from './reminders.js';
import { createSandboxClockActivities } from './sandbox-clock.js';
import { createSmokeCheckActivities } from './smoke-check.js';
import { createWebhookActivities } from './webhooks.js';
import { createWriteOffActivities } from './write-off.js';
import type { SealedBox } from '../src/domain/sealed-box.js';
import type { OfferTiming } from '../src/temporal/credit-workflows.js';
import type { FileStore } from '../src/storage/file-store.js';
import type { KeyRing } from '../src/domain/key-ring.js';
import type { Mailer } from '../src/mail/mailer.js';
import type { PspClient } from '../src/psp/client.js';

/** What activities may touch. Built once per worker process and handed in, never imported. */
export interface ActivityDeps {
  db: Db;
  logger: Logger;
  /** Names this worker process in records it writes (host and pid). */
  identity: string;
  /** Starts the workflows a write implies (webhook deliveries) right after its commit. */
  temporal: Client;
  taskQueue: string;
  /** How long offers last and how soon a new one follows (the credit-offers workflow's input). */
  offers: OfferTiming;
  /** What loan events need to present a loan (its signing page's address). */
  loans: LoanActivityDeps;
  /** The object store: documents and contracts an erasure or a retention period deletes. */
  files: FileStore;
  /** DENIED_DOCUMENT_RETENTION: how long a denied customer's documents are kept. */
  deniedDocumentRetentionMs: number;
  /**
   * The lender's PSP (contract §16): production money moves through it. Null where `PSP_API_URL`
   * is unset (development without the simulator, unit tests): production loans then keep ops'
   * manual path.
   */
  psp: PspClient | null;
  /** Reminders' opt-out links (contract §17); absent: reminder e-mails are recorded, not sent. */
  reminders?: ReminderActivityDeps;
  approvals: {
    /** APPROVAL_DECISION_KEYS: verify the API's proof of each decision (never in Temporal). */
    decisionKeys: KeyRing;
    /** Mails an operator the code of a token an approved staff change made. */
    mailer: Mailer;
  };
  webhooks: {
    /** Opens the endpoints' sealed secrets. */
    sealedBox: SealedBox;
    allowPrivateTargets: boolean;
    /** Ports a webhook URL may name (WEBHOOK_ALLOWED_PORTS); any with private targets allowed. */
    allowedPorts: readonly number[];
    /** WEBHOOK_ALLOW_LOOPBACK_HTTP: plain http to this machine (development); absent: refused. */
    allowLoopbackHttp?: boolean;
    /** Extra CA certificates (PEM) trusted for deliveries. */
    ca?: string;
  };
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createSmokeCheckActivities(deps),
    ...createCustomerActivities(deps),
    ...createCreditOfferActivities(deps),
    ...createLoanActivities(deps),
    ...createChargeActivities(deps),
    ...createPixActivities(deps),
    ...createRefundActivities(deps),
    ...createPayoutActivities(deps),
    ...createWebhookActivities(deps),
    ...createSandboxClockActivities(deps),
    ...createApprovalActivities(deps),
    ...createCustomerDataActivities(deps),
    ...createReconciliationActivities(deps),
    ...createReminderActivities(deps),
    ...createWriteOffActivities(deps),
    ...createAgreementActivities(deps),
    ...createRefinancingActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
