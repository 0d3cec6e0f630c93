import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { Key } from './key-ring.js';

/**
 * The rules of the one-time codes that identify a signer (contract §15): six digits, valid ten
 * minutes, five tries, and once verified a browser session of thirty minutes to read the contract
 * and sign. In the sandbox `000000` is also accepted. How many (issue 37, finding 8): three an
 * hour per person from one address; past three an hour for the person from anywhere, each next
 * code waits after the last one 30 s, then 60 s, doubling up to 5 minutes — so requests from
 * elsewhere can make a signer wait minutes, never an hour, and cannot flood their mailbox.
 */
export const verificationRules = {
  codeTtlMs: 10 * 60_000,
  maxAttempts: 5,
  codesPerHour: 3,
  backoffBaseMs: 30_000,
  backoffMaxMs: 5 * 60_000,
  sessionTtlMs: 30 * 60_000,
  sandboxCode: '000000',
} as const;

/**
 * When a person may be sent their next code, given the codes sent to them in the last hour (from
 * any address, the newest's time) and those sent from this address (the oldest's time).
 * Undefined: now.
 */
export function nextCodeAt(
  sent: { total: number; newestAt: number | null },
  fromHere: { count: number; oldestAt: number | null },
  now: number,
): number | undefined {
  const hour = 3_600_000;
  if (fromHere.count >= verificationRules.codesPerHour) return (fromHere.oldestAt ?? now) + hour;
  if (sent.total < verificationRules.codesPerHour || sent.newestAt === null) return undefined;
  const wait = Math.min(
    verificationRules.backoffBaseMs * 2 ** (sent.total - verificationRules.codesPerHour),
    verificationRules.backoffMaxMs,
  );
  return sent.newestAt + wait > now ? sent.newestAt + wait : undefined;
}

const CODE = /^\d{6}$/;

export const newVerificationCode = (): string => String(randomInt(0, 1_000_000)).padStart(6, '0');

/** A code's HMAC, bound to its row so one row's hash says nothing about another's code. */
export const hashVerificationCode = (key: Key, codeId: string, code: string): string =>
  createHmac('sha256', key.secret).update(`verification-code:${codeId}:${code}`).digest('hex');

/** Whether `presented` is the code whose HMAC is `expectedHash` (constant time). */
export function codeMatches(
  key: Key,
  codeId: string,
  presented: string,
  expectedHash: string,
): boolean {
  if (!CODE.test(presented)) return false;
  const given = Buffer.from(hashVerificationCode(key, codeId, presented), 'hex');
  const expected = Buffer.from(expectedHash, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** What a person may type: digits with spaces or dashes between them. */
export const normalizeCode = (text: unknown): string =>
  typeof text === 'string' ? text.replace(/[\s-]/g, '') : '';

/** A typo that cannot be a code (letters, five digits) is said so and spends no try. */
export const isCodeShaped = (code: string): boolean => CODE.test(code);
