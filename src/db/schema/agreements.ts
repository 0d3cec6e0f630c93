import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import type { AgreementFigures, AgreementStatus } from '../../domain/loans/agreements.js';
import type { AgreementBook } from '../../domain/loans/agreement-book.js';
import { agreementStatuses } from '../../domain/loans/agreements.js';
import { timestampColumn as ts } from './columns.js';
import { loans } from './loans.js';
import { environments } from './partners.js';

/**
 * A payment agreement's simulation (contract §17): the debt of a late loan on the customer's
 * date, its discount and the agreement's rows, kept until `valid_until` so that an agreement is
 * made on exactly the figures the partner showed.
 */
export const agreementSimulations = pgTable(
  'agreement_simulations',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    loanId: text('loan_id')
      .notNull()
      .references(() => loans.id),
    figures: jsonb('figures').$type<AgreementFigures>().notNull(),
    validUntil: ts('valid_until').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('agreement_simulations_loan_idx').on(t.loanId, t.createdAt)],
);

/**
 * A payment agreement (acordo, contract §17), made from one simulation. At most one live
 * (`pending_acceptance`, `pending_entry`, `active`) per loan: the partial unique index decides
 * between two requests racing.
 */
export const loanAgreements = pgTable(
  'loan_agreements',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    loanId: text('loan_id')
      .notNull()
      .references(() => loans.id),
    simulationId: text('simulation_id')
      .notNull()
      .references(() => agreementSimulations.id),
    status: text('status', { enum: agreementStatuses }).$type<AgreementStatus>().notNull(),
    figures: jsonb('figures').$type<AgreementFigures>().notNull(),
    /** Not accepted by then (the end of the first row's due date, customer's clock): `lapsed`. */
    acceptanceDeadline: ts('acceptance_deadline').notNull(),
    /**
     * The term the borrower is shown and accepts (its PDF, in the object store under `term_key`)
     * and its SHA-256, fixed at creation; null only on agreements made before terms existed, until
     * their page first shows one.
     */
    termKey: text('term_key'),
    termSha256: text('term_sha256'),
    acceptedAt: ts('accepted_at'),
    /** The acceptance's evidence, as a signature's (contract §15). */
    acceptedIp: text('accepted_ip'),
    acceptedUserAgent: text('accepted_user_agent'),
    acceptedChannel: text('accepted_channel'),
    /** The SHA-256 of the term accepted (the hosted page's, or the sandbox helper's). */
    acceptedSha256: text('accepted_sha256'),
    /**
     * Where its rows stand once it took its first payment (docs/agreements.md): its own rows'
     * repayment, the loan's rows as they stood then, every payment since, and the loan's account
     * balances before the covered rows were replaced. Null until a payment reached it.
     */
    book: jsonb('book').$type<AgreementBook>(),
    activeAt: ts('active_at'),
    endedAt: ts('ended_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('loan_agreements_simulation_idx').on(t.simulationId),
    uniqueIndex('loan_agreements_one_live_idx')
      .on(t.loanId)
      .where(sql`${t.status} IN ('pending_acceptance', 'pending_entry', 'active')`),
    index('loan_agreements_loan_idx').on(t.partnerId, t.environment, t.loanId, t.createdAt, t.id),
  ],
);
