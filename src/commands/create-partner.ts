import type { Db } from '../db/client.js';
import { credentials, environments, partners, type Environment } from '../db/schema/index.js';
import { newId } from '../domain/ids.js';
import { hashSecret, newClientSecret } from '../domain/secrets.js';

export interface IssuedCredential {
  client_id: string;
  client_secret: string;
}

export interface CreatedPartner {
  partner_id: string;
  name: string;
  credentials: Record<Environment, IssuedCredential>;
}

/** A partner with one sandbox and one production credential. Secrets leave only in the result. */
export async function createPartner(db: Db, input: { name: string }): Promise<CreatedPartner> {
  const partnerId = newId('ptn');
  const issued = environments.map((environment) => ({
    environment,
    clientId: newId('cli'),
    secret: newClientSecret(),
  }));
  await db.transaction(async (tx) => {
    await tx.insert(partners).values({ id: partnerId, name: input.name });
    await tx.insert(credentials).values(
      issued.map(({ environment, clientId, secret }) => ({
        id: newId('cred'),
        partnerId,
        environment,
        clientId,
        secretHash: hashSecret(secret),
        name: `${environment} (created with the partner)`,
      })),
    );
  });
  const byEnvironment = Object.fromEntries(
    issued.map(({ environment, clientId, secret }) => [
      environment,
      { client_id: clientId, client_secret: secret },
    ]),
  ) as Record<Environment, IssuedCredential>;
  return { partner_id: partnerId, name: input.name, credentials: byEnvironment };
}
