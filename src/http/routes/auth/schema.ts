import { z } from 'zod';
import { environments } from '../../../db/schema/index.js';
import { idField, idPattern, pathId } from '../../ids.js';
import { listEnvelope, listQuery } from '../../list.js';
import { problemSchema } from '../../openapi.js';
import { trimmedText } from '../../text.js';

const tokenFields = {
  client_id: z
    .string()
    .max(255)
    .optional()
    .meta({ description: 'Or send HTTP Basic credentials.' }),
  client_secret: z
    .string()
    .max(255)
    .optional()
    .meta({ description: 'The credential’s secret (or send HTTP Basic credentials).' }),
  scope: z.string().max(1000).optional().meta({ description: 'Accepted and ignored.' }),
};

/**
 * What the token endpoint reads. A missing or other `grant_type` is OAuth's 400
 * `unsupported_grant_type`, and bad client credentials of any shape its 401 `invalid_client`
 * (RFC 6749 §5.2), so neither is a 422 here.
 */
export const tokenRequest = z.strictObject({
  grant_type: z.string().optional(),
  ...tokenFields,
});

/** What the document shows: the same, with the grant type and the shape of a client id. */
export const tokenRequestDocumentation = z
  .strictObject({
    grant_type: z
      .literal('client_credentials')
      .meta({ description: 'OAuth 2.0 client credentials: the only grant.' }),
    ...tokenFields,
    client_id: z.string().regex(idPattern('cli')).optional().meta({
      description: 'Or send HTTP Basic credentials.',
      example: 'cli_0a1b2c3d4e5f60718293a4b5c6d7e8f9',
    }),
  })
  .meta({ id: 'TokenRequest' });

/** The token endpoint's problems also carry OAuth's `error` (RFC 6749 §5.2). */
export const tokenProblemSchema = problemSchema
  .extend({
    error: z
      .enum(['invalid_request', 'invalid_client', 'unsupported_grant_type'])
      .optional()
      .meta({ description: 'The OAuth 2.0 error code, beside `code`.' }),
  })
  .meta({ id: 'TokenProblem', description: 'An RFC 9457 problem with the OAuth 2.0 `error`.' });

export const tokenResponse = z
  .object({
    access_token: z.string().meta({
      description: 'Send as `Authorization: Bearer <token>`; valid for `expires_in` seconds.',
    }),
    token_type: z.literal('Bearer').meta({ description: 'Always `Bearer`.' }),
    expires_in: z.int().meta({ description: 'Seconds until the token expires (3600).' }),
  })
  .meta({ id: 'Token' });

export const credentialSchema = z
  .object({
    id: idField('cred'),
    client_id: idField('cli'),
    name: z.string().nullable().meta({ description: 'Your label for it.' }),
    environment: z
      .enum(environments)
      .meta({ description: 'Which data its tokens reach: `sandbox` or `production`.' }),
    created_at: z.iso.datetime(),
    last_used_at: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'Last successful token exchange.' }),
    revoked_at: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'When it was revoked: its tokens are refused from then on.' }),
  })
  .meta({ id: 'Credential' });

export const createdCredentialSchema = credentialSchema
  .extend({ client_secret: z.string().meta({ description: 'Shown only in this response.' }) })
  .meta({ id: 'CreatedCredential' });

export const createCredentialBody = z
  .strictObject({
    name: trimmedText(100)
      .optional()
      .meta({ description: 'A label of yours (which server uses it).' }),
  })
  .meta({ id: 'CreateCredentialRequest' });

export const credentialParams = z.object({
  client_id: pathId('cli', 'credential_not_found'),
});

export const credentialListQuery = listQuery('cred', ['created_at']);
export const credentialList = listEnvelope(credentialSchema, 'CredentialList');
