import type { WorkflowHandle } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { METADATA_ENCODING_KEY } from '@temporalio/common';
import { ENCRYPTED_ENCODING, PayloadEncryptionCodec } from '../../src/temporal/payload-codec.js';
import { customerKeysIn } from '../../src/temporal/customer-keys.js';
import { recordHistory } from './histories.js';
import type { TestStack } from './stack.js';

const isSealed = (value: unknown): value is Payload => {
  const encoding = (value as Payload | null)?.metadata?.[METADATA_ENCODING_KEY];
  return (
    encoding instanceof Uint8Array && new TextDecoder().decode(encoding) === ENCRYPTED_ENCODING
  );
};

/** Replaces every sealed payload in `node` (a history, as fetched) by what it holds. */
async function openAll(node: unknown, codec: PayloadEncryptionCodec): Promise<void> {
  if (node === null || typeof node !== 'object' || node instanceof Uint8Array) return;
  for (const [key, value] of Object.entries(node)) {
    if (isSealed(value))
      (node as Record<string, unknown>)[key] = (await codec.open(value, 'accept')).payload;
    else await openAll(value, codec);
  }
}

/**
 * `recordHistory` for a customer's workflow (a loan's): its payloads are sealed under the
 * customer's data key (contract §15), which the replay test cannot hold, so the history is saved
 * opened (plain payloads, as the test environment's histories are) through the stack's codec.
 */
export async function recordOpenedHistory(
  stack: TestStack,
  handle: WorkflowHandle,
  workflow: string,
  caseName: string,
): Promise<string | undefined> {
  const codec = new PayloadEncryptionCodec(
    stack.config.temporal.payloadKeys,
    'on',
    customerKeysIn(stack.database.db, stack.config.temporal.payloadKeys),
  );
  const history = await handle.fetchHistory();
  await openAll(history, codec);
  // The same handle, its history read already.
  const opened = { workflowId: handle.workflowId, fetchHistory: () => Promise.resolve(history) };
  return recordHistory(opened as unknown as WorkflowHandle, workflow, caseName);
}
