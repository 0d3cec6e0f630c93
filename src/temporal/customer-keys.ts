import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { DbOrTx } from '../db/client.js';
import {
  customerDataKeyById,
  customerDataKeyFor,
  customerOfLoan,
  rewrapCustomerDataKey,
  type CustomerDataKeyRow,
} from '../db/queries/data-keys.js';
import { newId } from '../domain/ids.js';
import type { KeyRing } from '../domain/key-ring.js';
import { deriveKey } from './payload-codec.js';
import { workflowIds } from './workflow-ids.js';

/** A customer's data key, unwrapped: what the codec seals that customer's payloads with. */
export interface CustomerKey {
  id: string;
  customerId: string;
  key: Buffer;
}

/** A payload of a customer's cannot be sealed or opened: the key is destroyed, or unknown. */
export class CustomerKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CustomerKeyError';
  }
}

/**
 * The per-customer data keys the payload codec uses (crypto-shredding, contract §15 "Erasure"):
 * which customer a workflow's payloads belong to, that customer's key to seal them (made on first
 * use, kept only wrapped in `customer_data_keys`), and the key a sealed payload names.
 */
export interface CustomerKeys {
  /** The customer whose data a workflow (and its activities) holds; undefined: no one's. */
  customerOf(workflowId: string): Promise<string | undefined>;
  /** Its key to seal with; undefined when there is no such customer. Throws once erased. */
  sealingKey(customerId: string): Promise<CustomerKey | undefined>;
  /** The key a payload names. Throws {@link CustomerKeyError} when destroyed or unknown. */
  openingKey(keyId: string): Promise<CustomerKey>;
}

const WRAP_PURPOSE = 'embedded-credit customer data key wrap v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The data key sealed under the ring's current key, bound to its id and customer. */
export function wrapDataKey(
  ring: KeyRing,
  key: Buffer,
  binding: { id: string; customerId: string },
): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(ring.current.secret, WRAP_PURPOSE), iv);
  cipher.setAAD(Buffer.from(`${binding.id}:${binding.customerId}`));
  const sealed = Buffer.concat([iv, cipher.update(key), cipher.final(), cipher.getAuthTag()]);
  return `v1.${ring.current.id}.${sealed.toString('base64url')}`;
}

export function unwrapDataKey(ring: KeyRing, row: CustomerDataKeyRow): Buffer {
  const [version, ringKeyId, data] = (row.wrappedKey ?? '').split('.');
  const ringKey = ringKeyId === undefined ? undefined : ring.find(ringKeyId);
  if (version !== 'v1' || !ringKey || !data)
    throw new CustomerKeyError(
      `customer data key ${row.id} is wrapped under payload key "${ringKeyId}", which TEMPORAL_PAYLOAD_KEYS does not list`,
    );
  const bytes = Buffer.from(data, 'base64url');
  const decipher = createDecipheriv(
    'aes-256-gcm',
    deriveKey(ringKey.secret, WRAP_PURPOSE),
    bytes.subarray(0, IV_BYTES),
  );
  decipher.setAAD(Buffer.from(`${row.id}:${row.customerId}`));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    throw new CustomerKeyError(`customer data key ${row.id} failed authentication`);
  }
}

const prefixOf = (build: (id: string) => string) => build('');
/** Workflows named by their customer's id, whose payloads are that customer's. */
const byCustomerId = [workflowIds.customerOnboarding, workflowIds.creditOffers].map(prefixOf);
const loanPrefix = prefixOf(workflowIds.loan);

/**
 * The keys in PostgreSQL, wrapped by TEMPORAL_PAYLOAD_KEYS. Unwrapped keys stay in memory at most
 * `maxAgeMs` (0: read on every use), so an erasure reaches every process within that time; which
 * customer a loan is never changes and is remembered. A key wrapped under an older payload key is
 * wrapped again under the current one when read.
 */
export function customerKeysIn(
  db: DbOrTx,
  ring: KeyRing,
  options: { maxAgeMs?: number } = {},
): CustomerKeys {
  const maxAgeMs = options.maxAgeMs ?? 30_000;
  const keys =
    maxAgeMs > 0 ? new LRUCache<string, CustomerKey>({ max: 10_000, ttl: maxAgeMs }) : undefined;
  const sealing =
    maxAgeMs > 0 ? new LRUCache<string, CustomerKey>({ max: 10_000, ttl: maxAgeMs }) : undefined;
  const loanCustomers = new LRUCache<string, string>({ max: 10_000 });

  const unwrapped = async (row: CustomerDataKeyRow): Promise<CustomerKey> => {
    if (row.destroyedAt !== null || row.wrappedKey === null)
      throw new CustomerKeyError(
        `customer data key ${row.id} was destroyed when customer ${row.customerId} was erased`,
      );
    const key = { id: row.id, customerId: row.customerId, key: unwrapDataKey(ring, row) };
    if (!row.wrappedKey.startsWith(`v1.${ring.current.id}.`))
      await rewrapCustomerDataKey(db, row.id, wrapDataKey(ring, key.key, key));
    keys?.set(key.id, key);
    sealing?.set(key.customerId, key);
    return key;
  };

  return {
    async customerOf(workflowId) {
      const prefix = byCustomerId.find((p) => workflowId.startsWith(p));
      if (prefix) return workflowId.slice(prefix.length);
      if (!workflowId.startsWith(loanPrefix)) return undefined;
      const loanId = workflowId.slice(loanPrefix.length);
      const known = loanCustomers.get(loanId);
      if (known) return known;
      const customerId = await customerOfLoan(db, loanId);
      if (customerId) loanCustomers.set(loanId, customerId);
      return customerId;
    },
    async sealingKey(customerId) {
      const cached = sealing?.get(customerId);
      if (cached) return cached;
      const row = await customerDataKeyFor(db, customerId, () => {
        const id = newId('cdk');
        return { id, wrappedKey: wrapDataKey(ring, randomBytes(32), { id, customerId }) };
      });
      return row ? unwrapped(row) : undefined;
    },
    async openingKey(keyId) {
      const cached = keys?.get(keyId);
      if (cached) return cached;
      const row = await customerDataKeyById(db, keyId);
      if (!row) throw new CustomerKeyError(`no customer data key ${keyId}`);
      return unwrapped(row);
    },
  };
}
