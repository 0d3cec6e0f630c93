import { createHmac, randomBytes } from 'node:crypto';

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The `webhook-signature` header of Standard Webhooks: for each secret, `v1,` + base64 of
 * HMAC-SHA256 over `{id}.{timestamp}.{body}` with the secret's bytes; entries space-separated.
 */
export function signatureHeader(input: {
  id: string;
  timestamp: number;
  body: string;
  secrets: string[];
}): string {
  const content = `${input.id}.${input.timestamp}.${input.body}`;
  return input.secrets
    .map((secret) => {
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
    })
    .join(' ');
}
