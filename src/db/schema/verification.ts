import { boolean, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampColumn as ts } from './columns.js';
import { environments } from './partners.js';

/**
 * What a code proves its holder may do: sign a loan as one signer, complete a biometrics session,
 * or accept a payment agreement as its borrower.
 */
export const verificationPurposes = [
  'loan_signature',
  'biometrics',
  'agreement_acceptance',
] as const;
export type VerificationPurpose = (typeof verificationPurposes)[number];

/**
 * A one-time code sent to a person's e-mail on record (contract §15, "Signing"): the link alone
 * opens a page, the code proves the person behind it. Only an HMAC of the code is kept. Once the
 * code is verified the row holds the browser session it opened (by its token's hash) and the
 * evidence of that verification, so a signature or a completed capture can name how its signer
 * was identified.
 */
export const verificationCodes = pgTable(
  'verification_codes',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    purpose: text('purpose', { enum: verificationPurposes }).notNull(),
    /**
     * The loan (`loan_signature`), biometrics session (`biometrics`) or agreement
     * (`agreement_acceptance`) the code is for.
     */
    subjectId: text('subject_id').notNull(),
    /** Who the code identifies: the signer's cpf, or the customer's id. */
    person: text('person').notNull(),
    /** Where the code went, masked (`email:m***@e***.com`). */
    channel: text('channel').notNull(),
    /**
     * A request for a cpf that does not sign (or cannot be sent a code): answered as a real one,
     * so the page tells nobody who signs, and counted by the same limits; it is sent to no one
     * and never verifies. `person` is then a keyed hash of the cpf typed, never the cpf.
     */
    decoy: boolean('decoy').notNull().default(false),
    /** The address that asked for the code: the hourly limit is per person and address. */
    requestedIp: text('requested_ip'),
    /** HMAC-SHA256 of the code under the signing-link key `key_id`. */
    codeHash: text('code_hash').notNull(),
    keyId: text('key_id').notNull(),
    attempts: integer('attempts').notNull().default(0),
    expiresAt: ts('expires_at').notNull(),
    /** Set when the e-mail could not be sent: the code never reached anyone and does not count. */
    failedAt: ts('failed_at'),
    verifiedAt: ts('verified_at'),
    verifiedIp: text('verified_ip'),
    verifiedUserAgent: text('verified_user_agent'),
    /** SHA-256 of the browser session's token the verification opened (a cookie). */
    sessionTokenHash: text('session_token_hash').unique(),
    sessionExpiresAt: ts('session_expires_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('verification_codes_person_idx').on(t.purpose, t.subjectId, t.person, t.createdAt)],
);
