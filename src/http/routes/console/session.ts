import { randomBytes } from 'node:crypto';
import type { KeyRing } from '../../../domain/key-ring.js';
import { derivedMac, macEqual, staffSessions, type StaffSession } from '../../staff-sessions.js';

/**
 * The console's two cookies, both HttpOnly, SameSite=Strict, for `/ops/console` only (Secure
 * under https):
 * - the session, a staff session (src/http/staff-sessions.ts, version `v1`): it names the
 *   operator token it was made from, never holding the token itself, and the console finds that
 *   token live and its operator active on every request, so rotating or revoking the token or
 *   deactivating the operator ends it at once, in every API process;
 * - the form cookie, 32 random bytes, whose HMAC is the CSRF token every form carries: a page of
 *   another site cannot read the cookie, and without the key no one can make its token.
 * Both MACs use keys derived (HKDF, purposes of their own) from CONSOLE_SESSION_KEYS, the
 * console's own ring: rotating it (the new key first) keeps sessions of the keys still listed and
 * ends those of a dropped key.
 */
export const SESSION_COOKIE = 'ops_console_session';
export const FORM_COOKIE = 'ops_console_form';
/** A working day: a session never outlives it, whatever happens to its token. */
export const SESSION_SECONDS = 10 * 3600;
const FORM_VALUE = /^[\w-]{43}$/;

export type ConsoleSession = StaffSession;

export function consoleSessions(ring: KeyRing, clock: () => Date) {
  const sessions = staffSessions(ring, clock, {
    version: 'v1',
    purpose: 'embedded-credit ops console session v1',
    seconds: SESSION_SECONDS,
  });
  const forms = derivedMac(ring, 'embedded-credit ops console form v1');

  return {
    issue: sessions.issue,
    verify: sessions.verify,
    /** A new form cookie's value. */
    newFormCookie: () => randomBytes(32).toString('base64url'),
    /** The cookie's value if it is one this console could have made (else a new one is due). */
    formCookieOf: (value: string | undefined) =>
      value !== undefined && FORM_VALUE.test(value) ? value : undefined,
    /** The CSRF token of a form cookie: `<key id>.<HMAC>`. */
    csrfOf: (formCookie: string) =>
      `${ring.current.id}.${forms.mac(ring.current.id, formCookie).toString('base64url')}`,
    /** Whether `presented` is the CSRF token of this form cookie, under any key of the ring. */
    csrfValid(formCookie: string | undefined, presented: string): boolean {
      if (formCookie === undefined) return false;
      const [keyId, signature] = presented.split('.');
      if (!keyId || !signature || !forms.has(keyId)) return false;
      return macEqual(Buffer.from(signature, 'base64url'), forms.mac(keyId, formCookie));
    },
  };
}

export type ConsoleSessions = ReturnType<typeof consoleSessions>;
