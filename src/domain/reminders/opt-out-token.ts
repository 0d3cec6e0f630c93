import { createHmac } from 'node:crypto';
import type { KeyRing } from '../key-ring.js';
import { presentedMacMatches } from '../presented-mac.js';

const CUSTOMER_ID = /^cust_[0-9a-f]{32}$/;
/** Domain separation: a reminder link's HMAC is never a signing link's under the same key. */
const PURPOSE = 'reminder-opt-out:';

const mac = (secret: Buffer, customerId: string) =>
  createHmac('sha256', secret).update(`${PURPOSE}${customerId}`).digest();

/**
 * The opt-out link's token, `{customer id}.{key id}.{HMAC}` under the current SIGNING_LINK_KEYS key
 * (as the signing page's, with its own purpose): every reminder e-mail can carry it without the
 * service keeping it, and it opens only the opt-out of that customer.
 */
export function optOutToken(keys: KeyRing, customerId: string): string {
  const key = keys.current;
  return `${customerId}.${key.id}.${mac(key.secret, customerId).toString('base64url')}`;
}

/** The customer a token names, if its key is still in the ring and its HMAC matches. */
export function customerIdOfOptOutToken(keys: KeyRing, token: string): string | undefined {
  const [customerId, keyId, presented, ...rest] = token.split('.');
  if (rest.length > 0 || !customerId || !keyId || !presented || !CUSTOMER_ID.test(customerId))
    return undefined;
  const key = keys.find(keyId);
  if (!key) return undefined;
  const expected = mac(key.secret, customerId);
  return presentedMacMatches(expected, presented) ? customerId : undefined;
}

/** The opt-out page's address: `{PUBLIC_BASE_URL}/hosted/reminders/{token}`. */
export const optOutUrl = (publicBaseUrl: string, keys: KeyRing, customerId: string): string =>
  `${publicBaseUrl}/hosted/reminders/${optOutToken(keys, customerId)}`;
