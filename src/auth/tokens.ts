import { createSecretKey, randomUUID } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Environment } from '../db/schema/index.js';

export const TOKEN_LIFETIME_SECONDS = 3600;
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

/** Partner bearer tokens: HS256 JWTs (`sub` = client_id, `ptn`, `env`), one hour, checked against `clock`. */
export function createTokenService(options: {
  signingKey: string;
  issuer: string;
  clock: () => Date;
}): TokenService {
  // A KeyObject, imported once: given bytes, jose imports the key again on every call.
  const key = createSecretKey(Buffer.from(options.signingKey, 'utf8'));
  return {
    async issue(claims) {
      const issuedAt = Math.floor(options.clock().getTime() / 1000);
      const accessToken = await new SignJWT({ ptn: claims.partnerId, env: claims.environment })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(claims.clientId)
        .setIssuer(options.issuer)
        .setAudience(AUDIENCE)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + TOKEN_LIFETIME_SECONDS)
        .setJti(randomUUID())
        .sign(key);
      return { accessToken, expiresIn: TOKEN_LIFETIME_SECONDS };
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, {
          issuer: options.issuer,
          audience: AUDIENCE,
          algorithms: ['HS256'],
          currentDate: options.clock(),
          clockTolerance: 0,
        });
        const { sub, ptn, env } = payload;
        if (
          typeof sub !== 'string' ||
          typeof ptn !== 'string' ||
          (env !== 'sandbox' && env !== 'production')
        ) {
          throw new TokenError('invalid');
        }
        return { clientId: sub, partnerId: ptn, environment: env };
      } catch (error) {
        if (error instanceof TokenError) throw error;
        throw new TokenError(error instanceof errors.JWTExpired ? 'expired' : 'invalid');
      }
    },
  };
}
