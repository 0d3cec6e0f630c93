import { timingSafeEqual } from 'node:crypto';

/**
 * Whether a MAC presented in base64url (a link's, a decision's proof) is the expected one, in its
 * one canonical spelling. Decoding the presented text would also take spellings that differ in the
 * last character's unused bits (`…A` and `…B` decode to the same 32 bytes), so a link altered there
 * would still open; the text is compared instead, in constant time.
 */
export function presentedMacMatches(expected: Buffer, presented: string): boolean {
  const canonical = Buffer.from(expected.toString('base64url'));
  const given = Buffer.from(presented);
  return given.length === canonical.length && timingSafeEqual(given, canonical);
}
