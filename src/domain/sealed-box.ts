import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { KeyRing } from './key-ring.js';

/**
 * AES-256-GCM for data kept at rest that must be readable again (webhook secrets, stored
 * idempotent responses, which can hold a client secret). Format: `v2.<key id>.<iv>.<tag>.<ciphertext>`,
 * each binary part base64url; sealed under the ring's current key, opened by the key it names.
 * Values of the first format (`v1.<iv>.<tag>.<ciphertext>`, no key id) open under whichever key
 * of the ring authenticates them.
 */
export interface SealedBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

// Any configured secret becomes a 256-bit key; the configuration requires at least 32 bytes.
const aesKey = (secret: Buffer) => createHash('sha256').update(secret).digest();

function decrypt(key: Buffer, iv: string, tag: string, ciphertext: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([
    decipher.update(Buffer.from(ciphertext, 'base64url')),
    decipher.final(),
  ]).toString('utf8');
}

export function createSealedBox(keys: KeyRing): SealedBox {
  const aesKeys = new Map(keys.all.map((key) => [key.id, aesKey(key.secret)]));
  const current = keys.current.id;
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', aesKeys.get(current)!, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [
        'v2',
        current,
        ...[iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url')),
      ].join('.');
    },
    open(sealed) {
      const parts = sealed.split('.');
      if (parts[0] === 'v2' && parts.length === 5) {
        const [, keyId, iv, tag, ciphertext] = parts as [string, string, string, string, string];
        const key = aesKeys.get(keyId);
        if (!key) throw new Error(`sealed under key ${keyId}, which is no longer configured`);
        return decrypt(key, iv, tag, ciphertext);
      }
      if (parts[0] === 'v1' && parts.length === 4) {
        const [, iv, tag, ciphertext] = parts as [string, string, string, string];
        for (const key of aesKeys.values()) {
          try {
            return decrypt(key, iv, tag, ciphertext);
          } catch {
            // not this key: GCM's tag tells
          }
        }
        throw new Error('sealed under a key that is no longer configured');
      }
      throw new Error('not a sealed value');
    },
  };
}
