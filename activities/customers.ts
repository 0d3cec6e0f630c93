import { ApplicationFailure } from '@temporalio/activity';
import type { Tenant } from '../src/domain/tenant.js';
import { closeSession, openSession } from '../src/db/queries/biometric-sessions.js';
import { findCustomer, updateCustomer } from '../src/db/queries/customers.js';
import {
  insertDocument,
  settleSubmittedDocuments,
  submittedFileNames,
} from '../src/db/queries/documents.js';
import { writeWithEvents } from './write-with-events.js';
import { creditOffersStart, signalCustomerDenied } from '../src/temporal/credit-workflows.js';
import { dispatchWorkflowStart, enqueueWorkflowStart } from '../src/temporal/outbox.js';
import { deniedDocumentsStart } from '../src/temporal/customer-data-workflows.js';
import { creditAnalysisFor } from '../src/domain/customers/credit-analysis.js';
import type { CreditAnalysis, KycState } from '../src/domain/customers/kyc.js';
import type {
  CustomerFieldChanges,
  SubmittedDocument,
} from '../workflows/customer-onboarding/messages.js';
import { clockOffset } from '../src/db/queries/sandbox-clocks.js';
import type { ActivityDeps } from './index.js';
import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../src/db/client.js';
import { customers } from '../src/db/schema/index.js';

const UNIQUE_VIOLATION = '23505';

/** Changed customer fields, named as their columns (the API speaks snake_case). */
function fieldColumns({ trading_name, ...same }: CustomerFieldChanges) {
  return { ...same, ...(trading_name !== undefined ? { tradingName: trading_name } : {}) };
}

/** Read under the lock of the change's update: ops' credit decision takes the same lock. */
async function creditAwaitsOps(tx: DbOrTx, customerId: string): Promise<boolean> {
  const [row] = await tx
    .select({ analysis: customers.creditAnalysis })
    .from(customers)
    .where(eq(customers.id, customerId));
  return row?.analysis?.status === 'manual_review_required';
}

export function createCustomerActivities(deps: ActivityDeps) {
  return {
    /** Stores the credit analysis for the offers to come. Runs once; a retry writes the same result. */
    async runCreditAnalysis(input: {
      tenant: Tenant;
      customerId: string;
    }): Promise<CreditAnalysis['status']> {
      const customer = await findCustomer(deps.db, input.tenant, input.customerId);
      if (!customer)
        throw ApplicationFailure.nonRetryable(
          `customer ${input.customerId} not found`,
          'not_found',
        );
      if (customer.creditAnalysis) return customer.creditAnalysis.status;
      const analysis = creditAnalysisFor({
        cpf: customer.cpf,
        environment: customer.environment,
        at: new Date(),
      });
      await updateCustomer(deps.db, input.tenant, input.customerId, { creditAnalysis: analysis });
      return analysis.status;
    },

    /**
     * Writes one KYC change in one transaction: the customer's status and items, field
     * corrections, the uploaded document, settled documents, a finished biometrics session, and
     * the change's events. Event ids come from the workflow, so a retry records nothing twice.
     */
    async persistCustomerChange(input: {
      tenant: Tenant;
      customerId: string;
      state: KycState;
      events: { id: string; type: string; data: Record<string, unknown> }[];
      settle?: { approved: string[]; rejected: string[] };
      document?: SubmittedDocument;
      fields?: CustomerFieldChanges;
      deniedReason?: string;
      completedSessionId?: string;
    }): Promise<void> {
      const { tenant, customerId } = input;
      try {
        const becameActive = input.events.some((event) => event.type === 'customer.active');
        const becameDenied = input.events.some((event) => event.type === 'customer.denied');
        const starts = await writeWithEvents(deps, tenant, async (tx) => {
          const written = await updateCustomer(tx, tenant, customerId, {
            status: input.state.status,
            kyc: input.state.kyc,
            ...(input.deniedReason !== undefined ? { deniedReason: input.deniedReason } : {}),
            ...fieldColumns(input.fields ?? {}),
          });
          // An erased customer's workflow is about to be ended: it records nothing more.
          if (!written) return { events: [], result: [] };
          if (input.document) {
            const { documentId, uploadedAt, ...file } = input.document;
            await insertDocument(tx, {
              ...file,
              id: documentId,
              partnerId: tenant.partnerId,
              environment: tenant.environment,
              customerId,
              status: 'submitted',
              uploadedAt: new Date(uploadedAt),
            });
          }
          if (input.settle) {
            await settleSubmittedDocuments(tx, tenant, {
              customerId,
              types: input.settle.approved,
              status: 'approved',
            });
            await settleSubmittedDocuments(tx, tenant, {
              customerId,
              types: input.settle.rejected,
              status: 'rejected',
            });
          }
          if (input.completedSessionId)
            await closeSession(tx, tenant, input.completedSessionId, 'completed');
          const now = new Date();
          // Read after the update above locked the customer row: an advance waits.
          const offsetMs =
            tenant.environment === 'sandbox' && (becameActive || becameDenied)
              ? await clockOffset(tx, customerId)
              : 0;
          const result: Awaited<ReturnType<typeof enqueueWorkflowStart>>[] = [];
          // An active customer gets offers: their workflow starts with the change that made it so,
          // unless the credit analysis waits for ops (production), whose decision starts it.
          if (becameActive && !(await creditAwaitsOps(tx, customerId)))
            result.push(
              await enqueueWorkflowStart(
                tx,
                creditOffersStart({ ...tenant, customerId }, deps.taskQueue, deps.offers, offsetMs),
              ),
            );
          // A denied customer's documents are kept DENIED_DOCUMENT_RETENTION, then deleted.
          if (becameDenied)
            result.push(
              await enqueueWorkflowStart(
                tx,
                deniedDocumentsStart(
                  {
                    ...tenant,
                    customerId,
                    deleteAt: now.getTime() + offsetMs + deps.deniedDocumentRetentionMs,
                    clockOffsetMs: offsetMs,
                  },
                  deps.taskQueue,
                ),
              ),
            );
          return { events: input.events.map((event) => ({ ...event, createdAt: now })), result };
        });
        for (const start of starts) await dispatchWorkflowStart(deps, start);
        if (input.state.status === 'denied') await signalCustomerDenied(deps.temporal, customerId);
      } catch (error) {
        if (typeof error === 'object' && error !== null && 'cause' in error) {
          const cause = error.cause as { code?: unknown } | undefined;
          if (cause?.code === UNIQUE_VIOLATION) {
            throw ApplicationFailure.nonRetryable(
              'Another customer has this identity.',
              'customer_already_exists',
            );
          }
        }
        throw error;
      }
    },

    /** What the sandbox's automatic review looks at: the customer's name and the submitted files. */
    async loadSandboxReviewFacts(input: { tenant: Tenant; customerId: string }) {
      const customer = await findCustomer(deps.db, input.tenant, input.customerId);
      if (!customer)
        throw ApplicationFailure.nonRetryable(
          `customer ${input.customerId} not found`,
          'not_found',
        );
      return {
        customerName: customer.name,
        fileNames: await submittedFileNames(deps.db, input.tenant, input.customerId),
      };
    },

    async openBiometricsSession(input: {
      tenant: Tenant;
      customerId: string;
      sessionId: string;
      tokenHash: string;
      expiresAt: string;
    }): Promise<void> {
      await openSession(deps.db, input.tenant, {
        id: input.sessionId,
        customerId: input.customerId,
        tokenHash: input.tokenHash,
        expiresAt: new Date(input.expiresAt),
      });
    },

    async expireBiometricsSession(input: { tenant: Tenant; sessionId: string }): Promise<void> {
      await closeSession(deps.db, input.tenant, input.sessionId, 'expired');
    },
  };
}
