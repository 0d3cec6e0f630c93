import { proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { customerClock } from '../clock.js';
import { databaseWrite } from '../presets.js';
import type { CustomerErasureInput, DeniedDocumentsInput } from './messages.js';

const {
  endCustomerWorkflows,
  deleteFiles,
  markErasureFilesDeleted,
  eraseRetainedRecords,
  completeErasure,
  deleteDeniedDocuments,
} = proxyActivities<Activities>(databaseWrite);

/**
 * One per erased customer (`customer-erasure/{cust_id}`, contract §15), started by the erasure's
 * request, which has already replaced the customer's personal data in PostgreSQL. This ends what
 * is left elsewhere: the customer's running workflows (their histories, encrypted by the payload
 * codec, go with the namespace's retention), the documents' files in the object store; then, when
 * records were kept for the law (a customer with loans), it waits until `retainedUntil` on the
 * customer's clock — a durable timer a sandbox clock advance moves like any other — and erases
 * those: the signers, the payout accounts, the contract files. Every step is idempotent, so a
 * retried or replayed step changes nothing twice.
 */
export async function customerErasureWorkflow(input: CustomerErasureInput): Promise<void> {
  const clock = customerClock(input.customerId, input.clock);
  await endCustomerWorkflows({ customerId: input.customerId });
  await deleteFiles({ keys: input.fileKeys });
  await markErasureFilesDeleted({ customerId: input.customerId });
  if (input.retainedUntil !== null) {
    setCurrentDetails(
      `Contracts and ledger kept until ${new Date(input.retainedUntil).toISOString()}`,
    );
    await clock.until(input.retainedUntil, () => false);
    const { fileKeys } = await eraseRetainedRecords({ customerId: input.customerId });
    await deleteFiles({ keys: fileKeys });
    await completeErasure({ customerId: input.customerId });
  }
  setCurrentDetails('Erased');
  await clock.settled();
}

/**
 * One per denied customer (`denied-documents/{cust_id}`): keeps the identity documents and selfies
 * the denial was decided on for DENIED_DOCUMENT_RETENTION, on the customer's clock, then deletes
 * them (rows and files).
 */
export async function deniedDocumentsWorkflow(input: DeniedDocumentsInput): Promise<void> {
  const clock = customerClock(input.customerId, input.clock);
  setCurrentDetails(`Documents kept until ${new Date(input.deleteAt).toISOString()}`);
  await clock.until(input.deleteAt, () => false);
  await deleteDeniedDocuments({ customerId: input.customerId });
  setCurrentDetails('Documents deleted');
  await clock.settled();
}
