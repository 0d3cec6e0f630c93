import { createHash, createHmac } from 'node:crypto';
import type { KeyRing } from '../key-ring.js';
import { presentedMacMatches } from '../presented-mac.js';

const LOAN_ID = /^ln_[0-9a-f]{32}$/;

const mac = (secret: Buffer, loanId: string) =>
  createHmac('sha256', secret).update(`loan-signing:${loanId}`).digest();

/**
 * The signing link's token: `{loan id}.{key id}.{HMAC of the loan id}` under the current signing
 * link key, so `signing_url` can be shown on every read of the loan without keeping the token, and
 * a key can be rotated: a link made under a key still in SIGNING_LINK_KEYS keeps working, one made
 * under a key dropped from it opens nothing. The token opens a page that asks for a code sent to
 * the signer; on its own it signs nothing (see `signing-codes.ts`).
 */
export function signingToken(keys: KeyRing, loanId: string): string {
  const key = keys.current;
  return `${loanId}.${key.id}.${mac(key.secret, loanId).toString('base64url')}`;
}

/** The loan a token names, if its key is still in the ring and its HMAC matches. */
export function loanIdOfSigningToken(keys: KeyRing, token: string): string | undefined {
  const [loanId, keyId, presented, ...rest] = token.split('.');
  if (rest.length > 0 || !loanId || !keyId || !presented || !LOAN_ID.test(loanId)) return undefined;
  const key = keys.find(keyId);
  if (!key) return undefined;
  const expected = mac(key.secret, loanId);
  return presentedMacMatches(expected, presented) ? loanId : undefined;
}

/**
 * Links issued before key ids (an HMAC alone, under the data key) are found by this hash, which
 * every loan keeps; they open only while their loan still takes signatures.
 */
export function hashSigningToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The signing page's address of each loan: `{PUBLIC_BASE_URL}/hosted/signing/{token}`. */
export function signingUrls(publicBaseUrl: string, keys: KeyRing): (loanId: string) => string {
  return (loanId) => `${publicBaseUrl}/hosted/signing/${signingToken(keys, loanId)}`;
}
