/**
 * Whether a configured secret looks random enough to protect a deployment (issue 37: an
 * `OPS_TOKEN` of one repeated character started without complaint). Length alone (32 bytes) does
 * not say it: `aaaa…` is as long as `openssl rand -hex 32`. Two checks that a secret drawn at random
 * always passes and a secret a person made up to satisfy a length rule usually fails:
 *
 * - its characters carry at least {@link MIN_SECRET_BITS} bits by their frequencies (Shannon's
 *   entropy of the characters, times the length): a repeated character carries 0, two alternating
 *   characters 1 bit each; 32 random hex digits (128 bits) carry at least 90 in practice;
 * - it is not a shorter string repeated (`passwordpasswordpassword…`, `0123…f0123…f`).
 *
 * It is an estimate of guessability, not a proof of randomness: a secret is still to be generated
 * (README: `openssl rand -hex 32`).
 */
export const MIN_SECRET_BITS = 80;

export function characterBits(secret: string): number {
  const counts = new Map<string, number>();
  const characters = [...secret];
  for (const character of characters) counts.set(character, (counts.get(character) ?? 0) + 1);
  let bitsPerCharacter = 0;
  for (const count of counts.values()) {
    const p = count / characters.length;
    bitsPerCharacter -= p * Math.log2(p);
  }
  return bitsPerCharacter * characters.length;
}

/** The shortest string the secret repeats (itself when it repeats nothing). */
export function repeatedUnit(secret: string): string {
  for (let length = 1; length <= secret.length / 2; length++) {
    if (secret.length % length !== 0) continue;
    const unit = secret.slice(0, length);
    if (unit.repeat(secret.length / length) === secret) return unit;
  }
  return secret;
}

/** Why the secret is too predictable to protect a deployment; undefined when it is not. */
export function predictability(secret: string): string | undefined {
  const unit = repeatedUnit(secret);
  if (unit.length < secret.length)
    return `is one string of ${unit.length} character${unit.length === 1 ? '' : 's'} repeated`;
  const bits = characterBits(secret);
  if (bits < MIN_SECRET_BITS)
    return `its characters carry about ${Math.floor(bits)} bits, at least ${MIN_SECRET_BITS} are needed`;
  return undefined;
}
