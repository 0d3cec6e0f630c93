import { bigserial, index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import type { OperatorRole } from '../../domain/operators.js';
import { timestampColumn as ts } from './columns.js';

/** Named staff (contract §15). Never deleted: the audit trail names them for good. */
export const operators = pgTable('operators', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  email: text('email').notNull().unique(),
  roles: jsonb('roles').$type<OperatorRole[]>().notNull(),
  /** The actor id of the administrator who created them. */
  createdBy: text('created_by').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  /** A deactivated operator's tokens are refused; only an approved reactivation clears it. */
  deactivatedAt: ts('deactivated_at'),
});

/** An operator's bearer tokens, stored hashed (SHA-256 of 256 random bits); revocable. */
export const operatorTokens = pgTable(
  'operator_tokens',
  {
    id: text('id').primaryKey(),
    operatorId: text('operator_id')
      .notNull()
      .references(() => operators.id),
    tokenHash: text('token_hash').notNull().unique(),
    createdAt: ts('created_at').notNull().defaultNow(),
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('operator_tokens_operator_idx').on(t.operatorId)],
);

/**
 * Every ops command (anything but a read; every request of the break-glass token), with its actor
 * and time: written before the command runs, its outcome a row of `ops_audit_outcomes` after, so
 * a command whose process died still shows, unfinished. Append-only: PostgreSQL refuses any
 * UPDATE, DELETE or TRUNCATE (a trigger; the application's role has no such grant either).
 */
export const opsAudit = pgTable(
  'ops_audit',
  {
    id: text('id').primaryKey(),
    seq: bigserial('seq', { mode: 'number' }).notNull().unique(),
    actorType: text('actor_type', { enum: ['operator', 'partner', 'system'] }).notNull(),
    actorId: text('actor_id').notNull(),
    operationId: text('operation_id').notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    requestId: text('request_id').notNull(),
    /**
     * Superseded by `ops_audit_outcomes` (where migration 0022 copied them): the outcome of a row
     * written before that release, when rows were completed in place. Never written now.
     */
    status: integer('status'),
    problemCode: text('problem_code'),
    detail: jsonb('detail').$type<Record<string, unknown>>(),
    startedAt: ts('started_at').notNull(),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('ops_audit_actor_idx').on(t.actorId, t.seq),
    index('ops_audit_operation_idx').on(t.operationId, t.seq),
  ],
);

/** How an audited command ended: one row per `ops_audit` row, written once, never changed. */
export const opsAuditOutcomes = pgTable('ops_audit_outcomes', {
  auditId: text('audit_id')
    .primaryKey()
    .references(() => opsAudit.id),
  /** The response's status and problem code. */
  status: integer('status').notNull(),
  problemCode: text('problem_code'),
  /** What the command said it did beyond its status (an approval's id, a loan's new state). */
  detail: jsonb('detail').$type<Record<string, unknown>>(),
  finishedAt: ts('finished_at').notNull(),
});

/** What money moved by hand on a production loan asks for (the loan's columns name it). */
export const moneyApprovalKinds = [
  'disbursement',
  'payment',
  'payoff',
  'refund',
  'devolucao',
] as const;
/**
 * What ops do by hand with a Pix no charge claimed (`end_to_end_id` names it): book it on a loan
 * (`pix_match`, whose loan is named too) or return it to its payer (`pix_return`).
 */
export const pixApprovalKinds = ['pix_match', 'pix_return'] as const;
/** A batch of loans sold (contract §19): its settlement (the request names the assignment). */
export const assignmentApprovalKinds = ['assignment'] as const;
/** What staff administration asks for (`operator_id` names the operator it is about). */
export const staffApprovalKinds = [
  'operator_creation',
  'role_change',
  'operator_reactivation',
  'token_rotation',
] as const;

/**
 * Dual control (contract §15, issue 37): money moved by hand on a production loan, and staff
 * administration, wait for a second operator. The maker's request becomes a pending approval,
 * executed when another operator with the deciding role approves it (its workflow,
 * `approval/{id}`, runs it and expires it). What it asks for never changes, and once decided
 * (`approved`, `failed`, `rejected`, `expired`) nothing of it does: PostgreSQL refuses it (a
 * trigger), and no approval is ever deleted.
 */
export const approvals = pgTable(
  'approvals',
  {
    id: text('id').primaryKey(),
    kind: text('kind', {
      enum: [
        ...moneyApprovalKinds,
        ...pixApprovalKinds,
        ...staffApprovalKinds,
        ...assignmentApprovalKinds,
      ],
    }).notNull(),
    /** A money approval's loan, its partner and environment; null on staff administration. */
    loanId: text('loan_id'),
    partnerId: text('partner_id'),
    environment: text('environment', { enum: ['sandbox', 'production'] }),
    /** Staff administration's operator (a new one's id, fixed when asked); null on money. */
    operatorId: text('operator_id'),
    /** The Pix a `pix_match` or `pix_return` is about; null otherwise. */
    endToEndId: text('end_to_end_id'),
    /** The command as it will run: its body, `paid_at` fixed when the maker asked. */
    request: jsonb('request').$type<Record<string, unknown>>().notNull(),
    makerId: text('maker_id').notNull(),
    checkerId: text('checker_id'),
    status: text('status', {
      enum: ['pending', 'executing', 'approved', 'failed', 'rejected', 'expired'],
    }).notNull(),
    /** A failed one's refusal (`code`, `detail`) or a rejection's reason. */
    outcome: jsonb('outcome').$type<Record<string, unknown>>(),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    decidedAt: ts('decided_at'),
  },
  (t) => [
    index('approvals_status_idx').on(t.status, t.createdAt),
    index('approvals_loan_idx').on(t.loanId),
    index('approvals_operator_idx').on(t.operatorId),
  ],
);

/**
 * How an operator gets a token without anyone else seeing it: an approved creation, reactivation
 * or rotation (or the break-glass token's first administrators) mails a one-time code to the
 * operator's own address, which the operator exchanges for the token
 * (`POST /ops/v1/operator-enrollments`). Only the code's SHA-256 is kept; a newer code voids the
 * older ones of the same operator.
 */
export const operatorEnrollments = pgTable(
  'operator_enrollments',
  {
    id: text('id').primaryKey(),
    operatorId: text('operator_id')
      .notNull()
      .references(() => operators.id),
    /** The approval that asked for it; null for an administrator the break-glass token started. */
    approvalId: text('approval_id'),
    codeHash: text('code_hash').notNull().unique(),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    redeemedAt: ts('redeemed_at'),
  },
  (t) => [index('operator_enrollments_operator_idx').on(t.operatorId)],
);
