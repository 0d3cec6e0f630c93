import type { DbOrTx } from '../db/client.js';
import { insertCredential, type Credential } from '../db/queries/credentials.js';
import { newId } from '../domain/ids.js';
import { hashSecret, newClientSecret } from '../domain/secrets.js';
import type { Tenant } from '../domain/tenant.js';

/** A new credential in the caller's environment. The secret is returned once and stored hashed. */
export async function createCredential(
  db: DbOrTx,
  tenant: Tenant,
  input: { name: string | null },
): Promise<{ credential: Credential; clientSecret: string }> {
  const clientSecret = newClientSecret();
  const credential = await insertCredential(db, tenant, {
    id: newId('cred'),
    clientId: newId('cli'),
    secretHash: hashSecret(clientSecret),
    name: input.name,
  });
  return { credential, clientSecret };
}
