import { createHash, randomBytes } from 'node:crypto';

/** A client secret: 256 random bits, shown once. */
export function newClientSecret(): string {
  return `sk_${randomBytes(32).toString('base64url')}`;
}

/**
 * Secrets are 256-bit random values, so a plain SHA-256 is a sufficient one-way hash: a slow
 * password hash protects guessable inputs, and nothing here is guessable.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
