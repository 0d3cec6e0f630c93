import type { Environment } from '../../src/domain/environments.js';
import type { ClockState } from '../sandbox-clock/messages.js';

/** `customer-erasure/{cust_id}`: what the erasure's request erased leaves to the workflow. */
export interface CustomerErasureInput {
  customerId: string;
  partnerId: string;
  environment: Environment;
  /** The files of the documents the request deleted (keys: ids only). */
  fileKeys: string[];
  /** Epoch milliseconds on the customer's clock: when the kept records go (null: none kept). */
  retainedUntil: number | null;
  /** The customer's sandbox clock (absent: real time). */
  clock?: ClockState;
}

/** `denied-documents/{cust_id}`: a denied customer's documents, deleted once their period ends. */
export interface DeniedDocumentsInput {
  customerId: string;
  /** Epoch milliseconds on the customer's clock. */
  deleteAt: number;
  clock?: ClockState;
}
