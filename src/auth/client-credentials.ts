import { timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/client.js';
import {
  findCredentialForAuthentication,
  recordCredentialUse,
  type Credential,
} from '../db/queries/credentials.js';
import { hashSecret } from '../domain/secrets.js';

const clientIdShape = /^cli_[0-9a-f]{32}$/;

// Compared against when the client_id is unknown, so both paths cost one hash and one comparison.
const UNKNOWN_CLIENT_HASH = hashSecret('unknown-client');

/** The OAuth 2.0 client-credentials check: a live credential whose secret hashes to the stored hash. */
export async function authenticateClient(
  db: Db,
  clientId: string,
  clientSecret: string,
  now: Date,
): Promise<Credential | undefined> {
  // A client id of another shape names nothing, and is not worth a query (nor can it break one).
  const credential = clientIdShape.test(clientId)
    ? await findCredentialForAuthentication(db, clientId)
    : undefined;
  const expected = Buffer.from(credential?.secretHash ?? UNKNOWN_CLIENT_HASH, 'hex');
  const presented = Buffer.from(hashSecret(clientSecret), 'hex');
  const secretMatches = timingSafeEqual(expected, presented);
  if (!credential || !secretMatches || credential.revokedAt) return undefined;
  await recordCredentialUse(db, credential.id, now);
  return credential;
}

/** `Authorization: Basic base64(urlencoded(id):urlencoded(secret))`, as RFC 6749 §2.3.1 sends it. */
export function parseBasicCredentials(
  header: string,
): { clientId: string; clientSecret: string } | undefined {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return {
      clientId: decodeURIComponent(decoded.slice(0, colon).replaceAll('+', ' ')),
      clientSecret: decodeURIComponent(decoded.slice(colon + 1).replaceAll('+', ' ')),
    };
  } catch {
    return undefined;
  }
}
