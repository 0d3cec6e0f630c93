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
 * `data` with every personal field replaced: strings and numbers by {@link ERASED}, anything else
 * (a null, an object in that place) by null. Everything else — ids, statuses, amounts, dates — is
 * kept, so the event still says what happened.
 */
export function redactPersonalData(data: unknown): unknown {
  if (Array.isArray(data)) return data.map(redactPersonalData);
  if (data === null || typeof data !== 'object') return data;
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [
      key,
      personalFields.has(key)
        ? value === null
          ? null
          : typeof value === 'string' || typeof value === 'number'
            ? ERASED
            : null
        : redactPersonalData(value),
    ]),
  );
}

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
