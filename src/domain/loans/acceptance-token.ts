import { createHmac } from 'node:crypto';
import type { KeyRing } from '../key-ring.js';
import { presentedMacMatches } from '../presented-mac.js';

const AGREEMENT_ID = /^agr_[0-9a-f]{32}$/;
/** Domain separation: an acceptance link's HMAC is never a signing or opt-out link's. */
const PURPOSE = 'agreement-acceptance:';

const mac = (secret: Buffer, agreementId: string) =>
  createHmac('sha256', secret).update(`${PURPOSE}${agreementId}`).digest();

/**
 * The acceptance link's token of a payment agreement (contract §17): `{agreement id}.{key id}.{HMAC}`
 * under the current SIGNING_LINK_KEYS key, as the signing link's, with its own purpose. Shown on
 * every read of the agreement without being kept; rotation as the signing link's. On its own it
 * accepts nothing: the page asks for a code sent to the borrower's e-mail.
 */
export function acceptanceToken(keys: KeyRing, agreementId: string): string {
  const key = keys.current;
  return `${agreementId}.${key.id}.${mac(key.secret, agreementId).toString('base64url')}`;
}

/** The agreement a token names, if its key is still in the ring and its HMAC matches. */
export function agreementIdOfAcceptanceToken(keys: KeyRing, token: string): string | undefined {
  const [agreementId, keyId, presented, ...rest] = token.split('.');
  if (rest.length > 0 || !agreementId || !keyId || !presented || !AGREEMENT_ID.test(agreementId))
    return undefined;
  const key = keys.find(keyId);
  if (!key) return undefined;
  const expected = mac(key.secret, agreementId);
  return presentedMacMatches(expected, presented) ? agreementId : undefined;
}

/** The acceptance page's address of each agreement: `{PUBLIC_BASE_URL}/hosted/agreements/{token}`. */
export function acceptanceUrls(
  publicBaseUrl: string,
  keys: KeyRing,
): (agreementId: string) => string {
  return (agreementId) =>
    `${publicBaseUrl}/hosted/agreements/${acceptanceToken(keys, agreementId)}`;
}
