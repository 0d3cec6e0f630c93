import { createHmac, timingSafeEqual } from 'node:crypto';
import type { KeyRing } from '../../../domain/key-ring.js';
import { deriveKey } from '../../../temporal/payload-codec.js';

/**
 * The Temporal UI's fetches to the codec endpoint cannot carry a bearer token: staff sign in once
 * on the endpoint's page with their ops token, and get this session in an HttpOnly, SameSite=Strict
 * cookie scoped to the endpoint's path — never the token itself. The session is
 * `v1.<key id>.<expiry, unix s>.<operator id>.<HMAC-SHA256>`, keyed by a key derived from
 * TEMPORAL_PAYLOAD_KEYS (HKDF, a purpose of its own): whoever holds those keys can decode payloads
 * anyway, so a session grants nothing they do not; every API process verifies it, rotation ends
 * sessions of a dropped key, and nothing is stored.
 */
export const SESSION_COOKIE = 'temporal_codec_session';
export const SESSION_SECONDS = 3600;
const SESSION_KEY_PURPOSE = 'embedded-credit temporal codec session v1';
const OPERATOR_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface CodecSession {
  operatorId: string;
  expiresAt: Date;
}

export function codecSessions(ring: KeyRing, clock: () => Date) {
  const keys = new Map(ring.all.map((key) => [key.id, deriveKey(key.secret, SESSION_KEY_PURPOSE)]));
  const mac = (keyId: string, body: string) =>
    createHmac('sha256', keys.get(keyId)!).update(body).digest();
  return {
    issue(operatorId: string): { value: string; session: CodecSession } {
      if (!OPERATOR_ID.test(operatorId)) throw new Error(`unexpected operator id ${operatorId}`);
      const expires = Math.floor(clock().getTime() / 1000) + SESSION_SECONDS;
      const body = ['v1', ring.current.id, String(expires), operatorId].join('.');
      return {
        value: `${body}.${mac(ring.current.id, body).toString('base64url')}`,
        session: { operatorId, expiresAt: new Date(expires * 1000) },
      };
    },
    verify(value: string | undefined): CodecSession | undefined {
      const parts = value?.split('.') ?? [];
      if (parts.length !== 5 || parts[0] !== 'v1') return undefined;
      const [, keyId, expires, operatorId, signature] = parts as [
        string,
        string,
        string,
        string,
        string,
      ];
      if (!keys.has(keyId) || !/^\d{1,12}$/.test(expires) || !OPERATOR_ID.test(operatorId))
        return undefined;
      const expected = mac(keyId, parts.slice(0, 4).join('.'));
      const given = Buffer.from(signature, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      const expiresAt = new Date(Number(expires) * 1000);
      return expiresAt > clock() ? { operatorId, expiresAt } : undefined;
    },
  };
}

export type CodecSessions = ReturnType<typeof codecSessions>;
