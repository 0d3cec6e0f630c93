import { WorkflowNotFoundError } from '@temporalio/client';
import { eq, inArray } from 'drizzle-orm';
import {
  customerWorkflowIds,
  eraseRetainedRecords,
  markErasureCompleted,
  markFilesDeleted,
} from '../src/db/queries/erasure.js';
import { documents, loans } from '../src/db/schema/index.js';
import type { ActivityDeps } from './index.js';

/** The activities of an erasure and of a denied customer's documents (contract §15). */
export function createCustomerDataActivities(deps: ActivityDeps) {
  return {
    /** Terminates the customer's workflows still running (an ended one is left as it is). */
    async endCustomerWorkflows(input: { customerId: string }): Promise<string[]> {
      const loanIds = await deps.db
        .select({ id: loans.id })
        .from(loans)
        .where(eq(loans.customerId, input.customerId));
      const ended: string[] = [];
      for (const workflowId of customerWorkflowIds(
        input.customerId,
        loanIds.map((loan) => loan.id),
      )) {
        try {
          await deps.temporal.workflow.getHandle(workflowId).terminate('customer erased');
          ended.push(workflowId);
        } catch (error) {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
        }
      }
      return ended;
    },

    /** Removes files from the object store; one already gone is not an error. */
    async deleteFiles(input: { keys: string[] }): Promise<void> {
      for (const key of input.keys) await deps.files.delete(key);
    },

    async markErasureFilesDeleted(input: { customerId: string }): Promise<void> {
      await markFilesDeleted(deps.db, input.customerId, new Date());
    },

    /** Erases what the law kept once its period ended; answers the contract files to delete. */
    async eraseRetainedRecords(input: { customerId: string }): Promise<{ fileKeys: string[] }> {
      return deps.db.transaction((tx) => eraseRetainedRecords(tx, input.customerId));
    },

    async completeErasure(input: { customerId: string }): Promise<void> {
      await markErasureCompleted(deps.db, input.customerId, new Date());
    },

    /**
     * Deletes a denied customer's documents: the files first, then the rows naming them, so a
     * retry after a crash between the two finds the rows and deletes again (nothing lost, nothing
     * left). Answers how many went.
     */
    async deleteDeniedDocuments(input: { customerId: string }): Promise<number> {
      const rows = await deps.db
        .select({ id: documents.id, key: documents.storageKey })
        .from(documents)
        .where(eq(documents.customerId, input.customerId));
      for (const row of rows) await deps.files.delete(row.key);
      if (rows.length > 0)
        await deps.db.delete(documents).where(
          inArray(
            documents.id,
            rows.map((row) => row.id),
          ),
        );
      deps.logger.info(
        { customerId: input.customerId, documents: rows.length },
        'denied customer documents deleted',
      );
      return rows.length;
    },
  };
}
