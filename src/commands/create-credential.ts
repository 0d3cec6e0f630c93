import type { Db } from '../db/client.js';
import {
  countLiveCredentials,
  insertCredential,
  lockPartnerForCredentials,
  type Credential,
} from '../db/queries/credentials.js';
import { newId } from '../domain/ids.js';
import { hashSecret, newClientSecret } from '../domain/secrets.js';
import type { Tenant } from '../domain/tenant.js';
import { problems } from '../errors.js';

export interface CredentialLimits {
  /** Live (not revoked) credentials a partner may hold, both environments together. */
  maxLivePerPartner: number;
}

/**
 * A new credential in the caller's environment. The secret is returned once and stored hashed.
 * The partner's row is locked while the live credentials are counted, so two creations racing at
 * the limit cannot both pass it.
 */
export async function createCredential(
  db: Db,
  tenant: Tenant,
  input: { name: string | null },
  limits: CredentialLimits,
): Promise<{ credential: Credential; clientSecret: string }> {
  const clientSecret = newClientSecret();
  const credential = await db.transaction(async (tx) => {
    if (!(await lockPartnerForCredentials(tx, tenant.partnerId)))
      throw new Error(`partner ${tenant.partnerId} of an authenticated caller does not exist`);
    if ((await countLiveCredentials(tx, tenant.partnerId)) >= limits.maxLivePerPartner)
      throw problems.credentialLimitReached(limits.maxLivePerPartner);
    return insertCredential(tx, tenant, {
      id: newId('cred'),
      clientId: newId('cli'),
      secretHash: hashSecret(clientSecret),
      name: input.name,
    });
  });
  return { credential, clientSecret };
}
