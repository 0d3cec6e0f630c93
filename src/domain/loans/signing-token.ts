import { createHash, createHmac } from 'node:crypto';

/**
 * The signing page's token: an HMAC of the loan id under a server key, so `signing_url` can be
 * shown on every read of the loan without keeping the token itself; the database holds only its
 * SHA-256, by which the page finds the loan.
 */
export function signingToken(key: string, loanId: string): string {
  return createHmac('sha256', key).update(`loan-signing:${loanId}`).digest('base64url');
}

export function hashSigningToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The signing page's address of each loan: `{PUBLIC_BASE_URL}/hosted/signing/{token}`. */
export function signingUrls(publicBaseUrl: string, key: string): (loanId: string) => string {
  return (loanId) => `${publicBaseUrl}/hosted/signing/${signingToken(key, loanId)}`;
}
