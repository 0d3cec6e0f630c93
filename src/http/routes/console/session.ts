import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyRing } from '../../../domain/key-ring.js';
import { deriveKey } from '../../../temporal/payload-codec.js';

/**
 * The console's two cookies, both HttpOnly, SameSite=Strict, for `/ops/console` only (Secure
 * under https):
 * - the session, `v1.<key id>.<expiry, unix s>.<operator id>.<token id>.<HMAC-SHA256>`: it names
 *   the operator token it was made from, never holding the token itself, and the console finds
 *   that token live and its operator active on every request (as the ops API's bearer guard
 *   does), so rotating or revoking the token or deactivating the operator ends it at once, in
 *   every API process;
 * - the form cookie, 32 random bytes, whose HMAC is the CSRF token every form carries: a page of
 *   another site cannot read the cookie, and without the key no one can make its token.
 * Both MACs use keys derived (HKDF, purposes of their own) from APPROVAL_DECISION_KEYS, the
 * staff side's keys: rotating that ring ends sessions of a dropped key.
 */
export const SESSION_COOKIE = 'ops_console_session';
export const FORM_COOKIE = 'ops_console_form';
/** A working day: a session never outlives it, whatever happens to its token. */
export const SESSION_SECONDS = 10 * 3600;
const SESSION_PURPOSE = 'embedded-credit ops console session v1';
const FORM_PURPOSE = 'embedded-credit ops console form v1';
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const FORM_VALUE = /^[\w-]{43}$/;

export interface ConsoleSession {
  operatorId: string;
  tokenId: string;
  expiresAt: Date;
}

export function consoleSessions(ring: KeyRing, clock: () => Date) {
  const derived = (purpose: string) =>
    new Map(ring.all.map((key) => [key.id, deriveKey(key.secret, purpose)]));
  const sessionKeys = derived(SESSION_PURPOSE);
  const formKeys = derived(FORM_PURPOSE);
  const mac = (keys: Map<string, Buffer>, keyId: string, body: string) =>
    createHmac('sha256', keys.get(keyId)!).update(body).digest();
  const equal = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

  return {
    issue(operatorId: string, tokenId: string): { value: string; session: ConsoleSession } {
      if (!ID.test(operatorId) || !ID.test(tokenId))
        throw new Error(`unexpected operator or token id ${operatorId} ${tokenId}`);
      const expires = Math.floor(clock().getTime() / 1000) + SESSION_SECONDS;
      const body = ['v1', ring.current.id, String(expires), operatorId, tokenId].join('.');
      return {
        value: `${body}.${mac(sessionKeys, ring.current.id, body).toString('base64url')}`,
        session: { operatorId, tokenId, expiresAt: new Date(expires * 1000) },
      };
    },

    verify(value: string | undefined): ConsoleSession | undefined {
      const parts = value?.split('.') ?? [];
      if (parts.length !== 6 || parts[0] !== 'v1') return undefined;
      const [, keyId, expires, operatorId, tokenId, signature] = parts as [
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      if (
        !sessionKeys.has(keyId) ||
        !/^\d{1,12}$/.test(expires) ||
        !ID.test(operatorId) ||
        !ID.test(tokenId)
      )
        return undefined;
      const expected = mac(sessionKeys, keyId, parts.slice(0, 5).join('.'));
      if (!equal(Buffer.from(signature, 'base64url'), expected)) return undefined;
      const expiresAt = new Date(Number(expires) * 1000);
      return expiresAt > clock() ? { operatorId, tokenId, expiresAt } : undefined;
    },

    /** A new form cookie's value. */
    newFormCookie: () => randomBytes(32).toString('base64url'),
    /** The cookie's value if it is one this console could have made (else a new one is due). */
    formCookieOf: (value: string | undefined) =>
      value !== undefined && FORM_VALUE.test(value) ? value : undefined,
    /** The CSRF token of a form cookie: `<key id>.<HMAC>`. */
    csrfOf: (formCookie: string) =>
      `${ring.current.id}.${mac(formKeys, ring.current.id, formCookie).toString('base64url')}`,
    /** Whether `presented` is the CSRF token of this form cookie, under any key of the ring. */
    csrfValid(formCookie: string | undefined, presented: string): boolean {
      if (formCookie === undefined) return false;
      const [keyId, signature] = presented.split('.');
      if (!keyId || !signature || !formKeys.has(keyId)) return false;
      return equal(Buffer.from(signature, 'base64url'), mac(formKeys, keyId, formCookie));
    },
  };
}

export type ConsoleSessions = ReturnType<typeof consoleSessions>;
