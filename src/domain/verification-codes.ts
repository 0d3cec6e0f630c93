import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { Key } from './key-ring.js';

/**
 * The rules of the one-time codes that identify a signer (contract §15): six digits, valid ten
 * minutes, five tries, at most three an hour per person, and once verified a browser session of
 * thirty minutes to read the contract and sign. In the sandbox `000000` is also accepted.
 */
export const verificationRules = {
  codeTtlMs: 10 * 60_000,
  maxAttempts: 5,
  codesPerHour: 3,
  sessionTtlMs: 30 * 60_000,
  sandboxCode: '000000',
} as const;

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
