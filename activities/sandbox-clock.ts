import { WorkflowNotFoundError } from '@temporalio/client';
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { customers, loans, sandboxClocks, workflowOutbox } from '../src/db/schema/index.js';
import { workflowIds } from '../src/temporal/workflow-ids.js';
import { erasureWaits, hasDocuments } from '../src/db/queries/erasure.js';
import { clockAdvancedSignal } from '../workflows/sandbox-clock/messages.js';
import type { ActivityDeps } from './index.js';

/** Loans whose workflow still waits on something (signatures, the disbursement, due dates). */
const waitingLoanStatuses = ['awaiting_signatures', 'processing', 'active'] as const;

/** The activities of a sandbox clock advance (contract §12). */
export function createSandboxClockActivities(deps: ActivityDeps) {
  return {
    /**
     * Tells every workflow waiting on the customer's behalf — onboarding until a denial, the
     * credit offers once active, each loan until it ends, a denied customer's documents' retention
     * while they are kept, an erasure's while it keeps contracts — that the clock now runs `offsetMs`
     * ahead, and to answer round `round` of `advance`. A workflow not found is either over
     * (nothing to tell) or its start is still in the outbox: `starting` counts those, to be told
     * on a later round.
     */
    async tellWaitingWorkflows(input: {
      customerId: string;
      offsetMs: number;
      advance: string;
      round: number;
    }): Promise<{ told: string[]; starting: number }> {
      const [customer] = await deps.db
        .select({ status: customers.status, erasedAt: customers.erasedAt })
        .from(customers)
        .where(eq(customers.id, input.customerId));
      if (!customer) return { told: [], starting: 0 };
      const open = await deps.db
        .select({ id: loans.id, status: loans.status })
        .from(loans)
        .where(
          and(
            eq(loans.customerId, input.customerId),
            inArray(loans.status, [...waitingLoanStatuses]),
          ),
        );
      const erased = customer.erasedAt !== null;
      const candidates = [
        ...(customer.status !== 'denied' && !erased
          ? [workflowIds.customerOnboarding(input.customerId)]
          : []),
        ...(customer.status === 'active' && !erased
          ? [workflowIds.creditOffers(input.customerId)]
          : []),
        ...open.map((loan) => workflowIds.loan(loan.id)),
        // An active loan's reminders (contract §17).
        ...open
          .filter((loan) => loan.status === 'active')
          .map((loan) => workflowIds.reminders(loan.id)),
        ...(customer.status === 'denied' &&
        !erased &&
        (await hasDocuments(deps.db, input.customerId))
          ? [workflowIds.deniedDocuments(input.customerId)]
          : []),
        ...((await erasureWaits(deps.db, input.customerId))
          ? [workflowIds.customerErasure(input.customerId)]
          : []),
      ];

      const told: string[] = [];
      const missing: string[] = [];
      const advance = { offsetMs: input.offsetMs, advance: input.advance, round: input.round };
      for (const workflowId of candidates) {
        try {
          await deps.temporal.workflow.getHandle(workflowId).signal(clockAdvancedSignal, advance);
          told.push(workflowId);
        } catch (error) {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
          missing.push(workflowId);
        }
      }
      if (missing.length === 0) return { told, starting: 0 };
      const [pending] = await deps.db
        .select({ count: sql<number>`count(*)::int` })
        .from(workflowOutbox)
        .where(and(inArray(workflowOutbox.workflowId, missing), isNull(workflowOutbox.startedAt)));
      return { told, starting: pending?.count ?? 0 };
    },

    /**
     * Everything due at `generation`'s offset has happened: the clock reads `ready`, unless a
     * later advance has been written meanwhile (then it is that one's to mark; false).
     */
    async markClockReady(input: { customerId: string; generation: number }): Promise<boolean> {
      const marked = await deps.db
        .update(sandboxClocks)
        .set({ status: 'ready', updatedAt: sql`now()` })
        .where(
          and(
            eq(sandboxClocks.customerId, input.customerId),
            eq(sandboxClocks.generation, input.generation),
          ),
        )
        .returning({ customerId: sandboxClocks.customerId });
      return marked.length > 0;
    },
  };
}
