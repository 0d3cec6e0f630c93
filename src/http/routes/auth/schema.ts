import { z } from 'zod';
import { environments } from '../../../db/schema/index.js';
import { listEnvelope, listQuery } from '../../list.js';

export const tokenRequest = z
  .strictObject({
    grant_type: z.string().optional().meta({ description: 'Must be `client_credentials`.' }),
    client_id: z
      .string()
      .max(255)
      .optional()
      .meta({ description: 'Or send HTTP Basic credentials.' }),
    client_secret: z.string().max(255).optional(),
    scope: z.string().max(1000).optional().meta({ description: 'Accepted and ignored.' }),
  })
  .meta({ id: 'TokenRequest' });

export const tokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.int().meta({ description: 'Seconds until the token expires (3600).' }),
  })
  .meta({ id: 'Token' });

export const credentialSchema = z
  .object({
    id: z.string().meta({ example: 'cred_3f1c0e6a9d2b4c7e8f0a1b2c3d4e5f60' }),
    client_id: z.string().meta({ example: 'cli_0a1b2c3d4e5f60718293a4b5c6d7e8f9' }),
    name: z.string().nullable(),
    environment: z.enum(environments),
    created_at: z.iso.datetime(),
    last_used_at: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'Last successful token exchange.' }),
    revoked_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Credential' });

export const createdCredentialSchema = credentialSchema
  .extend({ client_secret: z.string().meta({ description: 'Shown only in this response.' }) })
  .meta({ id: 'CreatedCredential' });

export const createCredentialBody = z
  .strictObject({ name: z.string().trim().min(1).max(100).optional() })
  .meta({ id: 'CreateCredentialRequest' });

export const credentialParams = z.object({
  client_id: z.string().meta({ example: 'cli_0a1b2c3d4e5f60718293a4b5c6d7e8f9' }),
});

export const credentialListQuery = listQuery(['created_at']);
export const credentialList = listEnvelope(credentialSchema, 'CredentialList');
