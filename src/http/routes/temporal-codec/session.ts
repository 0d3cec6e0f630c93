import type { KeyRing } from '../../../domain/key-ring.js';
import { staffSessions, type StaffSession } from '../../staff-sessions.js';

/**
 * The Temporal UI's fetches to the codec endpoint cannot carry a bearer token: staff sign in once
 * on the endpoint's page with their ops token, and get a staff session (src/http/staff-sessions.ts)
 * in an HttpOnly, SameSite=Strict cookie scoped to the endpoint's path — never the token itself.
 * Its key is derived from TEMPORAL_PAYLOAD_KEYS (a purpose of its own). It names the token it was
 * made from (an operator token's id, or a keyed fingerprint of OPS_TOKEN), and the endpoint checks
 * that token on every use: rotating or revoking it, deactivating the operator or taking away its
 * role ends the session at once. Rotating the payload keys ends sessions of a dropped key.
 */
export const SESSION_COOKIE = 'temporal_codec_session';
export const SESSION_SECONDS = 3600;

export type CodecSession = StaffSession;

export function codecSessions(ring: KeyRing, clock: () => Date) {
  const sessions = staffSessions(ring, clock, {
    version: 'v2',
    purpose: 'embedded-credit temporal codec session v1',
    seconds: SESSION_SECONDS,
  });
  return {
    issue: sessions.issue,
    verify: sessions.verify,
    /** The token id of a session made with OPS_TOKEN: a keyed fingerprint, so a new token ends it. */
    breakGlassTokenId(opsToken: string): string {
      return `ops-${sessions.fingerprint(`ops-token:${opsToken}`).toString('base64url').slice(0, 32)}`;
    },
  };
}

export type CodecSessions = ReturnType<typeof codecSessions>;
