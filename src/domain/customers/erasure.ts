import { createHmac, hkdfSync } from 'node:crypto';
import type { KeyRing } from '../key-ring.js';
import type { DisbursementAccount } from '../loans/disbursement-account.js';

/** What an erased personal field reads (contract §15: "replaced"). */
export const ERASED = '[erased]';

/**
 * The fields of a stored or sent payload that name or reach a person: a customer's, a signer's, a
 * document's file name, where a loan's money went. An erasure replaces each, at any depth, in
 * the event payloads about the customer.
 */
const personalFields = new Set([
  'cpf',
  'cnpj',
  'name',
  'email',
  'phone',
  'trading_name',
  'external_id',
  'file_name',
  'pix_key',
  'branch',
  'account_number',
  'ip_address',
  'user_agent',
]);

/**
 * Free text written about a person — a denial's reason, a KYC review's message to the customer, a
 * partner's reason for cancelling — may name or describe them: replaced too (issue 37). A
 * cancellation's reason that is one of the service's own codes says nothing of anyone and stays.
 */
const freeTextFields = new Set(['reason', 'denied_reason', 'message', 'cancellation_reason']);
export const cancellationCodes = new Set([
  'requested',
  'signature_deadline',
  'release_window_passed',
  'withdrawal',
]);

const redacted = (value: unknown) =>
  value === null ? null : typeof value === 'string' || typeof value === 'number' ? ERASED : null;

/**
 * `data` with every personal field and free text replaced: strings and numbers by {@link ERASED},
 * anything else (a null, an object in that place) by null. Everything else — ids, statuses,
 * amounts, dates, codes — is kept, so the event still says what happened.
 */
export function redactPersonalData(data: unknown): unknown {
  if (Array.isArray(data)) return data.map(redactPersonalData);
  if (data === null || typeof data !== 'object') return data;
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [
      key,
      personalFields.has(key)
        ? redacted(value)
        : freeTextFields.has(key)
          ? key === 'cancellation_reason' &&
            typeof value === 'string' &&
            cancellationCodes.has(value)
            ? value
            : redacted(value)
          : redactPersonalData(value),
    ]),
  );
}

/** A loan's cancellation reason as kept after an erasure: the service's codes, no one's text. */
export const redactCancellationReason = (reason: string | null): string | null =>
  reason === null || cancellationCodes.has(reason) ? reason : ERASED;

/** Where an erased loan's money went, without the account or key that names a person. */
export function redactDisbursementAccount(account: DisbursementAccount): DisbursementAccount {
  return account.type === 'pix'
    ? { ...account, pix_key: ERASED }
    : { ...account, branch: ERASED, account_number: ERASED };
}

/**
 * The keyed hashes of an identity (cpf, cnpj), one per key of the ring, each `keyid:hex`: what an
 * erased customer keeps of it, so a registration of the same identity is recognized (under any key
 * still in the ring) while the cpf itself cannot be read back or found by trying every cpf without
 * the key. The HMAC key is derived from the data-encryption key by HKDF, never the key itself.
 */
export function identityHashes(
  ring: KeyRing,
  identity: { cpf: string; cnpj: string | null },
): string[] {
  const message = `${identity.cpf}|${identity.cnpj ?? ''}`;
  return hashKeysOf(ring).map(
    ({ id, hmacKey }) => `${id}:${createHmac('sha256', hmacKey).update(message).digest('hex')}`,
  );
}

const derived = new WeakMap<KeyRing, { id: string; hmacKey: Buffer }[]>();

/** Each key's HMAC key, derived once per ring (a registration hashes with every one). */
function hashKeysOf(ring: KeyRing) {
  let keys = derived.get(ring);
  if (!keys) {
    keys = ring.all.map((key) => ({
      id: key.id,
      hmacKey: Buffer.from(
        hkdfSync('sha256', key.secret, Buffer.alloc(0), 'customer-identity-hash', 32),
      ),
    }));
    derived.set(ring, keys);
  }
  return keys;
}
