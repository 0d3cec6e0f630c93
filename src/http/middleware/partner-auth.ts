import type { Middleware } from 'koa';
import { TokenError, type TokenService } from '../../auth/tokens.js';
import type { CredentialCache } from '../../auth/credential-cache.js';
import { problems } from '../../errors.js';
import type { AppState } from '../context.js';

/**
 * Bearer-token authentication of partner routes. The credential comes from the credential cache,
 * which hears every revocation at once, in every API process.
 */
export function partnerAuth(deps: {
  credentials: CredentialCache;
  tokens: TokenService;
}): Middleware<AppState> {
  return async (ctx, next) => {
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(ctx.get('Authorization'));
    if (!match?.[1]) throw problems.unauthorized();
    let claims;
    try {
      claims = await deps.tokens.verify(match[1]);
    } catch (error) {
      if (error instanceof TokenError && error.reason === 'expired') throw problems.tokenExpired();
      throw problems.unauthorized(
        'The bearer token is malformed or its signature does not verify.',
      );
    }
    const credential = await deps.credentials.find(claims.clientId);
    if (
      !credential ||
      credential.partnerId !== claims.partnerId ||
      credential.environment !== claims.environment
    ) {
      throw problems.unauthorized('The bearer token names no credential.');
    }
    if (credential.revokedAt) throw problems.tokenRevoked();
    ctx.state.tenant = { partnerId: credential.partnerId, environment: credential.environment };
    ctx.state.credential = { id: credential.id, clientId: credential.clientId };
    await next();
  };
}
