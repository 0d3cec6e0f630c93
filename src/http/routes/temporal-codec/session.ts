import { createHmac, timingSafeEqual } from 'node:crypto';
import type { KeyRing } from '../../../domain/key-ring.js';
import { deriveKey } from '../../../temporal/payload-codec.js';

/**
 * The Temporal UI's fetches to the codec endpoint cannot carry a bearer token: staff sign in once
 * on the endpoint's page with their ops token, and get this session in an HttpOnly, SameSite=Strict
 * cookie scoped to the endpoint's path — never the token itself. The session is
 * `v2.<key id>.<expiry, unix s>.<operator id>.<token id>.<HMAC-SHA256>`, keyed by a key derived
 * from TEMPORAL_PAYLOAD_KEYS (HKDF, a purpose of its own). It names the token it was made from
 * (an operator token's id, or a keyed fingerprint of OPS_TOKEN), and the endpoint checks that
 * token on every use: rotating or revoking it, deactivating the operator or taking away its role
 * ends the session at once, in every API process. Rotating the payload keys ends sessions of a
 * dropped key.
 */
export const SESSION_COOKIE = 'temporal_codec_session';
export const SESSION_SECONDS = 3600;
const SESSION_KEY_PURPOSE = 'embedded-credit temporal codec session v1';
const ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface CodecSession {
  operatorId: string;
  /** The token the session was made from (see above). */
  tokenId: string;
  expiresAt: Date;
}

export function codecSessions(ring: KeyRing, clock: () => Date) {
  const keys = new Map(ring.all.map((key) => [key.id, deriveKey(key.secret, SESSION_KEY_PURPOSE)]));
  const mac = (keyId: string, body: string) =>
    createHmac('sha256', keys.get(keyId)!).update(body).digest();
  return {
    issue(operatorId: string, tokenId: string): { value: string; session: CodecSession } {
      if (!ID.test(operatorId) || !ID.test(tokenId))
        throw new Error(`unexpected operator or token id ${operatorId} ${tokenId}`);
      const expires = Math.floor(clock().getTime() / 1000) + SESSION_SECONDS;
      const body = ['v2', ring.current.id, String(expires), operatorId, tokenId].join('.');
      return {
        value: `${body}.${mac(ring.current.id, body).toString('base64url')}`,
        session: { operatorId, tokenId, expiresAt: new Date(expires * 1000) },
      };
    },
    verify(value: string | undefined): CodecSession | undefined {
      const parts = value?.split('.') ?? [];
      if (parts.length !== 6 || parts[0] !== 'v2') return undefined;
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
      const expected = mac(keyId, parts.slice(0, 5).join('.'));
      const given = Buffer.from(signature, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      const expiresAt = new Date(Number(expires) * 1000);
      return expiresAt > clock() ? { operatorId, tokenId, expiresAt } : undefined;
    },
    /** The token id of a session made with OPS_TOKEN: a keyed fingerprint, so a new token ends it. */
    breakGlassTokenId(opsToken: string): string {
      return `ops-${mac(ring.current.id, `ops-token:${opsToken}`).toString('base64url').slice(0, 32)}`;
    },
  };
}

export type CodecSessions = ReturnType<typeof codecSessions>;
