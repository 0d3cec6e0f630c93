import { createHmac, timingSafeEqual } from 'node:crypto';
import type { KeyRing } from '../domain/key-ring.js';
import { deriveKey } from '../temporal/payload-codec.js';

/**
 * A staff member's browser session, signed: `<version>.<key id>.<expiry, unix s>.<operator id>.
 * <token id>.<HMAC-SHA256>`, kept in an HttpOnly, SameSite=Strict cookie. It names the operator
 * token it was made from, never holding the token itself, and whoever honours it finds that token
 * live and its operator active on every use: rotating or revoking the token or deactivating the
 * operator ends it at once, in every API process. Its MAC key is derived (HKDF) from a key ring
 * for a purpose of its own; the ring's first key signs, every key verifies, so dropping a key
 * ends the sessions made under it. The back office (console/session.ts) and the Temporal UI's
 * codec endpoint (temporal-codec/session.ts) each make theirs with this, under their own rings,
 * versions and lifetimes.
 */
export interface StaffSession {
  operatorId: string;
  /** The token the session was made from. */
  tokenId: string;
  expiresAt: Date;
}

export interface StaffSessionKind {
  /** The cookie value's first part: a session of another kind never verifies as this one. */
  version: string;
  /** The HKDF purpose of the MAC key. */
  purpose: string;
  /** How long a session lasts at most. */
  seconds: number;
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** HMAC-SHA256 under keys of `ring` derived for `purpose`, by key id. */
export function derivedMac(ring: KeyRing, purpose: string) {
  const keys = new Map(ring.all.map((key) => [key.id, deriveKey(key.secret, purpose)]));
  return {
    has: (keyId: string) => keys.has(keyId),
    mac: (keyId: string, body: string) => {
      const key = keys.get(keyId);
      if (!key) throw new Error(`no key ${keyId} in the ring`);
      return createHmac('sha256', key).update(body).digest();
    },
  };
}

/** Whether two MACs are equal, in constant time. */
export const macEqual = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

export function staffSessions(ring: KeyRing, clock: () => Date, kind: StaffSessionKind) {
  const keys = derivedMac(ring, kind.purpose);
  return {
    issue: (operatorId: string, tokenId: string): { value: string; session: StaffSession } => {
      if (!ID.test(operatorId) || !ID.test(tokenId))
        throw new Error(`unexpected operator or token id ${operatorId} ${tokenId}`);
      const expires = Math.floor(clock().getTime() / 1000) + kind.seconds;
      const body = [kind.version, ring.current.id, String(expires), operatorId, tokenId].join('.');
      return {
        value: `${body}.${keys.mac(ring.current.id, body).toString('base64url')}`,
        session: { operatorId, tokenId, expiresAt: new Date(expires * 1000) },
      };
    },

    verify: (value: string | undefined): StaffSession | undefined => {
      const parts = value?.split('.') ?? [];
      if (parts.length !== 6 || parts[0] !== kind.version) return undefined;
      const [, keyId, expires, operatorId, tokenId, signature] = parts as [
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      if (
        !keys.has(keyId) ||
        !/^\d{1,12}$/.test(expires) ||
        !ID.test(operatorId) ||
        !ID.test(tokenId)
      )
        return undefined;
      const expected = keys.mac(keyId, parts.slice(0, 5).join('.'));
      if (!macEqual(Buffer.from(signature, 'base64url'), expected)) return undefined;
      const expiresAt = new Date(Number(expires) * 1000);
      return expiresAt > clock() ? { operatorId, tokenId, expiresAt } : undefined;
    },

    /** A MAC under the current key of this kind's purpose (a keyed fingerprint). */
    fingerprint: (body: string) => keys.mac(ring.current.id, body),
  };
}
