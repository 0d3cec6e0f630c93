import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/client.js';
import type { VerificationPurpose } from '../db/schema/index.js';
import {
  codesSentSince,
  findSession,
  insertCode,
  lockCodeSubject,
  markCodeFailed,
  markCodeVerified,
  spendAttempt,
  type CodeSubject,
  type VerificationCode,
} from '../db/queries/verification-codes.js';
import type { KeyRing } from '../domain/key-ring.js';
import { maskEmail } from '../domain/masking.js';
import type { Tenant } from '../domain/tenant.js';
import {
  codeMatches,
  hashVerificationCode,
  newVerificationCode,
  nextCodeAt,
  verificationRules as rules,
} from '../domain/verification-codes.js';

/** What sends the code: the SMTP mailer (src/mail/mailer.ts). */
export interface CodeMailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
}

export interface VerificationDeps {
  db: Db;
  mailer: CodeMailer;
  /** The signing-link keys: the current one keys the codes' HMACs. */
  signingLinkKeys: KeyRing;
  clock: () => Date;
}

/** The code could not be sent: nothing was sent, nothing counts; the person may try again. */
export class CodeNotSentError extends Error {
  constructor(cause: unknown) {
    super('the verification code could not be sent', { cause });
    this.name = 'CodeNotSentError';
  }
}

export type CodeRequestOutcome =
  | { kind: 'sent'; codeId: string; channel: string; expiresAt: Date }
  | { kind: 'too_many'; retryAfterSeconds: number };

const HOUR_MS = 3_600_000;
/** The channel of a decoy: it went nowhere. */
const NOWHERE = 'none';

/**
 * Sends a person a fresh code for a subject (a loan to sign, a capture to complete), within the
 * limits of `verificationRules` (per person and address, and a backoff per person). The row is
 * committed before the e-mail leaves, so a crash after the send leaves a code that works; a send
 * that fails marks the row failed, and a failed code neither works nor counts toward the limits.
 *
 * `recipient` null records a decoy instead — the answer to a request for someone who cannot be
 * sent a code (a cpf that does not sign), counted and answered exactly as a real one, sent to no
 * one, never verifying — so the answer tells nothing. With `delivery: 'background'` the e-mail
 * leaves after the answer (a failure marks the row failed; the person asks again), so neither its
 * time nor an outage of the relay tells a real code from a decoy.
 */
export async function sendVerificationCode(
  deps: VerificationDeps,
  tenant: Tenant,
  subject: CodeSubject,
  recipient: { email: string; message: (code: string) => { subject: string; text: string } } | null,
  request: { requestedIp: string | null; delivery?: 'await' | 'background' },
): Promise<CodeRequestOutcome> {
  const now = deps.clock();
  const codeId = `vc_${randomBytes(16).toString('hex')}`;
  const code = newVerificationCode();
  const key = deps.signingLinkKeys.current;
  const channel = recipient ? `email:${maskEmail(recipient.email)}` : NOWHERE;
  const expiresAt = new Date(now.getTime() + rules.codeTtlMs);
  const limited = await deps.db.transaction(async (tx) => {
    await lockCodeSubject(tx, subject);
    const sent = await codesSentSince(
      tx,
      subject,
      new Date(now.getTime() - HOUR_MS),
      request.requestedIp,
    );
    const next = nextCodeAt(
      { total: sent.total, newestAt: sent.newestAt },
      { count: sent.fromHere, oldestAt: sent.oldestFromHereAt },
      now.getTime(),
    );
    if (next !== undefined) return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
    await insertCode(tx, tenant, {
      id: codeId,
      purpose: subject.purpose,
      subjectId: subject.subjectId,
      person: subject.person,
      channel,
      codeHash: hashVerificationCode(key, codeId, code),
      keyId: key.id,
      expiresAt,
      createdAt: now,
      decoy: recipient === null,
      requestedIp: request.requestedIp,
    });
    return undefined;
  });
  if (limited !== undefined) return { kind: 'too_many', retryAfterSeconds: limited };
  if (recipient) {
    const delivered = deps.mailer
      .send({ to: recipient.email, ...recipient.message(code) })
      .catch(async (error: unknown) => {
        // The mailer has logged why (with the address masked).
        await markCodeFailed(deps.db, codeId, deps.clock()).catch(() => undefined);
        throw new CodeNotSentError(error);
      });
    if (request.delivery === 'background') delivered.catch(() => undefined);
    else await delivered;
  }
  return { kind: 'sent', codeId, channel, expiresAt };
}

export type CodeCheckOutcome =
  | { kind: 'verified'; code: VerificationCode; sessionToken: string }
  | { kind: 'wrong'; attemptsLeft: number; code: VerificationCode }
  | { kind: 'spent' };

const hashSessionToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Checks a code typed on a hosted page. `spent` covers every code that can no longer be tried
 * (unknown, expired, verified already, out of tries, never sent): the page asks for a new one.
 * A right code opens a browser session, whose token the caller hands the browser as a cookie.
 */
export async function checkVerificationCode(
  deps: VerificationDeps,
  request: {
    codeId: string;
    purpose: VerificationPurpose;
    subjectId: string;
    presented: string;
    /** Sandbox records also accept the published test code. */
    sandbox: boolean;
    evidence: { ipAddress: string | null; userAgent: string | null };
  },
): Promise<CodeCheckOutcome> {
  const now = deps.clock();
  const where = { id: request.codeId, purpose: request.purpose, subjectId: request.subjectId };
  const row = await spendAttempt(deps.db, where, now, rules.maxAttempts);
  if (!row) return { kind: 'spent' };
  const key = deps.signingLinkKeys.find(row.keyId);
  // A decoy is spent like a code, and never right.
  const right =
    !row.decoy &&
    ((request.sandbox && request.presented === rules.sandboxCode) ||
      (key !== undefined && codeMatches(key, row.id, request.presented, row.codeHash)));
  if (!right) return { kind: 'wrong', attemptsLeft: rules.maxAttempts - row.attempts, code: row };
  const sessionToken = randomBytes(32).toString('base64url');
  const verified = await markCodeVerified(deps.db, row.id, {
    verifiedAt: now,
    verifiedIp: request.evidence.ipAddress,
    verifiedUserAgent: request.evidence.userAgent?.slice(0, 1000) ?? null,
    sessionTokenHash: hashSessionToken(sessionToken),
    sessionExpiresAt: new Date(now.getTime() + rules.sessionTtlMs),
  });
  if (!verified) return { kind: 'spent' };
  return { kind: 'verified', code: { ...row, verifiedAt: now }, sessionToken };
}

/** The person a browser session identifies, while it lasts. */
export async function verifiedSession(
  deps: Pick<VerificationDeps, 'db' | 'clock'>,
  purpose: VerificationPurpose,
  subjectId: string,
  sessionToken: string | undefined,
): Promise<VerificationCode | undefined> {
  if (!sessionToken) return undefined;
  return findSession(
    deps.db,
    { purpose, subjectId, sessionTokenHash: hashSessionToken(sessionToken) },
    deps.clock(),
  );
}
