/**
 * A purpose's keys, each with an id so it can be rotated: the first signs or encrypts, every one
 * verifies or decrypts. Configured as `id:secret[,id:secret…]` (TOKEN_SIGNING_KEYS,
 * DATA_ENCRYPTION_KEYS, SIGNING_LINK_KEYS). Rotating is: put the new key first, keep the old one
 * after it while what it made is still in use, then drop it.
 */
export interface Key {
  readonly id: string;
  /** The secret's bytes (UTF-8 of the configured text). */
  readonly secret: Buffer;
}

export interface KeyRing {
  /** The key that signs or encrypts from now on. */
  readonly current: Key;
  /** Every key, the current one first. */
  readonly all: readonly Key[];
  find(id: string): Key | undefined;
}

/** Key ids travel in tokens and sealed values: short and URL-safe, never containing a separator. */
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
export const MIN_KEY_BYTES = 32;

export function keyRing(keys: readonly Key[]): KeyRing {
  const [current] = keys;
  if (!current) throw new Error('a key ring needs at least one key');
  const byId = new Map(keys.map((key) => [key.id, key]));
  return Object.freeze({
    current,
    all: Object.freeze([...keys]),
    find: (id: string) => byId.get(id),
  });
}

/** The ring as configured (`id:secret,…`, the current key first): for a child process's environment. */
export const formatKeyRing = (ring: KeyRing): string =>
  ring.all.map((key) => `${key.id}:${key.secret.toString('utf8')}`).join(',');

/** Parses `id:secret[,id:secret…]`; every problem is reported (an empty list means it parsed). */
export function parseKeyRing(text: string): { ring?: KeyRing; problems: string[] } {
  const problems: string[] = [];
  const keys: Key[] = [];
  for (const [index, entry] of text.split(',').entries()) {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon).trim();
    const secret = colon < 0 ? '' : entry.slice(colon + 1);
    if (!KEY_ID.test(id)) {
      problems.push(`key ${index + 1}: expected id:secret, the id 1-32 letters, digits, _ or -`);
      continue;
    }
    if (keys.some((key) => key.id === id)) problems.push(`key ${id}: the id appears twice`);
    const bytes = Buffer.from(secret, 'utf8');
    if (bytes.length < MIN_KEY_BYTES)
      problems.push(`key ${id}: must be at least ${MIN_KEY_BYTES} bytes`);
    keys.push({ id, secret: bytes });
  }
  return problems.length > 0 ? { problems } : { ring: keyRing(keys), problems };
}
