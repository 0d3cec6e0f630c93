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
  /** Set once: a deactivated operator's tokens are refused. */
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
 * Every ops command (anything but a read), with its actor, time and outcome: written before the
 * command runs and completed after it, so a command whose process died still shows, unfinished.
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
    /** The response's status and problem code; null while it runs (or if its process died). */
    status: integer('status'),
    problemCode: text('problem_code'),
    /** What the command said it did beyond its status (an approval's id, a loan's new state). */
    detail: jsonb('detail').$type<Record<string, unknown>>(),
    startedAt: ts('started_at').notNull(),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('ops_audit_actor_idx').on(t.actorId, t.seq),
    index('ops_audit_operation_idx').on(t.operationId, t.seq),
  ],
);

/**
 * Money moved by hand waits for a second operator (contract §15): a maker's command on a
 * production loan becomes a pending approval, executed when another operator with the role
 * approves it (its workflow, `approval/{id}`, runs it and expires it).
 */
export const approvals = pgTable(
  'approvals',
  {
    id: text('id').primaryKey(),
    kind: text('kind', { enum: ['disbursement', 'payment', 'payoff', 'refund'] }).notNull(),
    loanId: text('loan_id').notNull(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: ['sandbox', 'production'] }).notNull(),
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
  ],
);
