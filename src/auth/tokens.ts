import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Environment } from '../db/schema/index.js';
import type { KeyRing } from '../domain/key-ring.js';

export const TOKEN_LIFETIME_SECONDS = 3600;
/** Tokens whose signature was verified, remembered by their exact text. */
const VERIFIED_TOKENS = 10_000;
const AUDIENCE = 'embedded-credit-api';

export interface TokenClaims {
  clientId: string;
  partnerId: string;
  environment: Environment;
}

export type TokenFailure = 'expired' | 'invalid';

export class TokenError extends Error {
  constructor(readonly reason: TokenFailure) {
    super(`token ${reason}`);
    this.name = 'TokenError';
  }
}

export interface TokenService {
  issue(claims: TokenClaims): Promise<{ accessToken: string; expiresIn: number }>;
  verify(token: string): Promise<TokenClaims>;
}

/**
 * Partner bearer tokens: HS256 JWTs (`sub` = client_id, `ptn`, `env`), one hour, checked against
 * `clock`. A partner sends the same token for its hour, so a token verified once is remembered by
 * its exact text (signature included) with its claims and expiry: a later request with it skips
 * the HMAC and the parsing, not the expiry. Whether its credential still stands is not a token's
 * matter (see credential-cache.ts).
 */
export function createTokenService(options: {
  /** Signs with the current key (its id in the header's `kid`); verifies with the key `kid` names. */
  keys: KeyRing;
  issuer: string;
  clock: () => Date;
}): TokenService {
  const keyObjects = new Map(options.keys.all.map((k) => [k.id, createSecretKey(k.secret)]));
  const current = options.keys.current.id;
  // Tokens issued before key ids (no `kid`) are checked against the current key.
  const keyFor = ({ kid }: { kid?: string | undefined }): KeyObject => {
    const key = keyObjects.get(kid ?? current);
    if (!key) throw new TokenError('invalid');
    return key;
  };
  const verified = new LRUCache<string, { claims: TokenClaims; expiresAtMs: number }>({
    max: VERIFIED_TOKENS,
  });
  return {
    async issue(claims) {
      const issuedAt = Math.floor(options.clock().getTime() / 1000);
      const accessToken = await new SignJWT({ ptn: claims.partnerId, env: claims.environment })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: current })
        .setSubject(claims.clientId)
        .setIssuer(options.issuer)
        .setAudience(AUDIENCE)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + TOKEN_LIFETIME_SECONDS)
        .setJti(randomUUID())
        .sign(keyObjects.get(current)!);
      return { accessToken, expiresIn: TOKEN_LIFETIME_SECONDS };
    },
    async verify(token) {
      const known = verified.get(token);
      if (known) {
        // jose's rule: expired once the clock reaches `exp`.
        if (options.clock().getTime() >= known.expiresAtMs) {
          verified.delete(token);
          throw new TokenError('expired');
        }
        return known.claims;
      }
      try {
        const { payload } = await jwtVerify(token, keyFor, {
          issuer: options.issuer,
          audience: AUDIENCE,
          algorithms: ['HS256'],
          requiredClaims: ['exp'],
          currentDate: options.clock(),
          clockTolerance: 0,
        });
        const { sub, ptn, env, exp } = payload;
        if (
          typeof sub !== 'string' ||
          typeof ptn !== 'string' ||
          (env !== 'sandbox' && env !== 'production') ||
          typeof exp !== 'number'
        ) {
          throw new TokenError('invalid');
        }
        const claims: TokenClaims = { clientId: sub, partnerId: ptn, environment: env };
        verified.set(token, { claims, expiresAtMs: exp * 1000 });
        return claims;
      } catch (error) {
        if (error instanceof TokenError) throw error;
        throw new TokenError(error instanceof errors.JWTExpired ? 'expired' : 'invalid');
      }
    },
  };
}
