import ipaddr from 'ipaddr.js';
import { authenticateClient, parseBasicCredentials } from '../../../auth/client-credentials.js';
import type { CredentialCache } from '../../../auth/credential-cache.js';
import type { TokenService } from '../../../auth/tokens.js';
import { createCredential } from '../../../commands/create-credential.js';
import type { Db } from '../../../db/client.js';
import {
  findCredential,
  listCredentials,
  revokeCredential,
} from '../../../db/queries/credentials.js';
import type { RateLimiter } from '../../../domain/token-bucket.js';
import { problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import { tenantOf } from '../../context.js';
import { presentPage } from '../../list.js';
import { presentCredential } from '../../../presenters/auth.js';
import {
  createCredentialBody,
  createdCredentialSchema,
  credentialList,
  credentialListQuery,
  credentialParams,
  credentialSchema,
  tokenProblemSchema,
  tokenRequest,
  tokenRequestDocumentation,
  tokenResponse,
} from './schema.js';

export interface AuthRouteDeps {
  db: Db;
  tokens: TokenService;
  credentials: CredentialCache;
  /**
   * Failed token exchanges, counted per (client_id, address) pair (see {@link failureKey}) in
   * buckets every API process shares: a guesser spreading over processes gets one budget.
   */
  tokenFailures: RateLimiter;
  /** Live credentials a partner may hold, both environments together. */
  maxCredentialsPerPartner: number;
  clock: () => Date;
}

const notFound = (clientId: string) =>
  problems.notFound(
    'credential_not_found',
    `No credential with client_id ${clientId} in this environment.`,
  );

/**
 * The bucket a failed exchange spends: the client id with the caller's address, so failures slow
 * down only that client from that address, and nobody can spend another address's tokens. The
 * client id is cut to a length no real one exceeds, so a key's size stays bounded, and quoted as
 * JSON, so whatever a caller sends (a NUL, a lone surrogate) makes a key PostgreSQL can store. An
 * IPv4 address is spelt as such however the socket saw it (`::ffff:10.0.0.1` is `10.0.0.1`), so
 * processes listening on IPv4 and on both families count one caller once.
 */
function failureKey(clientId: string, address: string): string {
  const caller = ipaddr.isValid(address) ? ipaddr.process(address).toString() : address;
  return `${JSON.stringify(clientId.slice(0, 64))} ${caller}`;
}

export function authRoutes(api: ApiRouter, deps: AuthRouteDeps): void {
  api.add(
    {
      method: 'post',
      path: '/auth/token',
      operationId: 'createToken',
      summary: 'Exchange client credentials for a bearer token',
      description:
        'OAuth 2.0 client credentials. Send `client_id` and `client_secret` in the body (form or JSON) or as HTTP Basic. The token lasts one hour. ' +
        'A correct secret is always accepted; wrong secrets are limited per client_id and caller address (429 with `Retry-After`).',
      tag: 'Authentication',
      security: 'none',
      body: tokenRequest,
      bodyType: 'form-or-json',
      bodyDocumentation: tokenRequestDocumentation,
      responses: { 200: { description: 'A bearer token.', schema: tokenResponse } },
      errors: [400, 401, 429],
      problems: { 400: tokenProblemSchema, 401: tokenProblemSchema },
    },
    async (ctx, { body }) => {
      const basic = parseBasicCredentials(ctx.get('Authorization'));
      const clientId = basic?.clientId ?? body.client_id ?? '';
      if (body.grant_type !== 'client_credentials') throw problems.unsupportedGrantType();
      // The secret is checked before any limit: a correct one gets its token whatever failures
      // preceded it, so wrong secrets sent for a public client_id cannot lock its owner out.
      // The limit never stood between a guesser and a secret: those are 256 random bits.
      const credential = await authenticateClient(
        deps.db,
        clientId,
        basic?.clientSecret ?? body.client_secret ?? '',
        deps.clock(),
      );
      if (!credential) {
        const decision = await deps.tokenFailures.take(failureKey(clientId, ctx.ip));
        if (!decision.allowed) throw problems.rateLimited(decision.retryAfterSeconds);
        throw problems.invalidClient();
      }
      const { accessToken, expiresIn } = await deps.tokens.issue({
        clientId: credential.clientId,
        partnerId: credential.partnerId,
        environment: credential.environment,
      });
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Pragma', 'no-cache');
      ctx.body = { access_token: accessToken, token_type: 'Bearer', expires_in: expiresIn };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/auth/credentials',
      operationId: 'createCredential',
      summary: 'Create an API credential',
      description:
        'A new client_id/client_secret pair in the environment of the calling token. The secret is shown only here. ' +
        `A partner holds at most ${deps.maxCredentialsPerPartner} live credentials, sandbox and production together; ` +
        'beyond that, 409 `credential_limit_reached` until one is revoked.',
      tag: 'Authentication',
      security: 'partner',
      idempotent: true,
      body: createCredentialBody,
      errors: [409],
      responses: {
        201: {
          description: 'The credential, with its secret.',
          schema: createdCredentialSchema,
          headers: { Location: 'Path of the new credential.' },
        },
      },
    },
    async (ctx, { body }) => {
      const { credential, clientSecret } = await createCredential(
        deps.db,
        tenantOf(ctx),
        { name: body.name ?? null },
        { maxLivePerPartner: deps.maxCredentialsPerPartner },
      );
      ctx.status = 201;
      ctx.set('Location', `/v3/auth/credentials/${credential.clientId}`);
      ctx.body = { ...presentCredential(credential), client_secret: clientSecret };
    },
  );

  api.add(
    {
      method: 'get',
      path: '/auth/credentials',
      operationId: 'listCredentials',
      summary: 'List API credentials',
      description:
        'The credentials of the calling environment, revoked ones included; never their secrets.',
      tag: 'Authentication',
      security: 'partner',
      query: credentialListQuery,
      responses: { 200: { description: 'A page of credentials.', schema: credentialList } },
      errors: [400],
    },
    async (ctx, { query }) => {
      ctx.body = presentPage(
        await listCredentials(deps.db, tenantOf(ctx), query),
        presentCredential,
      );
    },
  );

  api.add(
    {
      method: 'get',
      path: '/auth/credentials/{client_id}',
      operationId: 'getCredential',
      summary: 'Retrieve an API credential',
      tag: 'Authentication',
      security: 'partner',
      params: credentialParams,
      responses: { 200: { description: 'The credential.', schema: credentialSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const credential = await findCredential(deps.db, tenantOf(ctx), params.client_id);
      if (!credential) throw notFound(params.client_id);
      ctx.body = presentCredential(credential);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/auth/credentials/{client_id}',
      operationId: 'revokeCredential',
      summary: 'Revoke an API credential',
      description: 'Its tokens stop working at once. Revoking twice keeps the first `revoked_at`.',
      tag: 'Authentication',
      security: 'partner',
      params: credentialParams,
      responses: { 200: { description: 'The revoked credential.', schema: credentialSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const credential = await deps.credentials.changing(params.client_id, () =>
        revokeCredential(deps.db, tenantOf(ctx), params.client_id),
      );
      if (!credential) throw notFound(params.client_id);
      ctx.body = presentCredential(credential);
    },
  );
}
