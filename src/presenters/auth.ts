import type { z } from 'zod';
import type { Credential } from '../db/queries/credentials.js';
import type { credentialSchema } from '../http/routes/auth/schema.js';

export function presentCredential(credential: Credential): z.infer<typeof credentialSchema> {
  return {
    id: credential.id,
    client_id: credential.clientId,
    name: credential.name,
    environment: credential.environment,
    created_at: credential.createdAt.toISOString(),
    last_used_at: credential.lastUsedAt?.toISOString() ?? null,
    revoked_at: credential.revokedAt?.toISOString() ?? null,
  };
}
