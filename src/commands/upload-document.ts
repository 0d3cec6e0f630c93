import { createHash } from 'node:crypto';
import { findCustomer } from '../db/queries/customers.js';
import { findDocument, type Document } from '../db/queries/documents.js';
import { sniffFileType } from '../domain/file-types.js';
import { newId } from '../domain/ids.js';
import { ProblemError, problems } from '../errors.js';
import type { Tenant } from '../domain/tenant.js';
import { changeCustomer } from '../temporal/customer-workflows.js';
import { submitDocumentUpdate } from '../../workflows/customer-onboarding/messages.js';
import type { CustomerDeps } from './customer-deps.js';

/**
 * Stores an uploaded KYC file and hands it to the customer's workflow, which records the document
 * and moves the item. A refusal removes the stored file, so a failed upload leaves no row and no
 * file; only when the outcome is unknown (the workflow did not answer in time) is the file kept,
 * since the document may yet be recorded.
 */
export async function uploadDocument(
  deps: CustomerDeps,
  tenant: Tenant,
  input: { customerId: string; type: string; fileName: string; bytes: Buffer },
): Promise<Document> {
  const customer = await findCustomer(deps.db, tenant, input.customerId);
  if (!customer) throw problems.notFound('customer_not_found', `No customer ${input.customerId}.`);
  const contentType = sniffFileType(input.bytes);
  if (!contentType) {
    throw new ProblemError(
      'unsupported_file_type',
      'The file is not a PDF, JPEG or PNG (judged by its content).',
    );
  }

  const documentId = newId('doc');
  const storageKey = `${tenant.partnerId}/${tenant.environment}/${customer.id}/${documentId}`;
  const sha256 = createHash('sha256').update(input.bytes).digest('hex');
  // Stored first: the row that names it follows. A refusal removes it; an unclear failure (the
  // workflow may still record it) leaves it to the orphan sweeper, which only removes objects no
  // row names a day later.
  await deps.files.put(storageKey, input.bytes, sha256);
  try {
    await changeCustomer(deps, customer, submitDocumentUpdate, [
      {
        documentId,
        type: input.type,
        fileName: input.fileName,
        contentType,
        sizeBytes: input.bytes.length,
        sha256,
        storageKey,
        uploadedAt: deps.clock().toISOString(),
      },
    ]);
  } catch (error) {
    if (error instanceof ProblemError) await deps.files.delete(storageKey);
    throw error;
  }
  const document = await findDocument(deps.db, tenant, { customerId: customer.id, documentId });
  if (!document) throw new Error(`document ${documentId} was accepted but not recorded`);
  return document;
}
