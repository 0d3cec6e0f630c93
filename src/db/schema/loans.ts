import type { Actor } from '../../domain/operators.js';
import { sql } from 'drizzle-orm';
import {
  bigint,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { SimulationFigures } from '../../domain/credit/simulation.js';
import type { DisbursementAccount } from '../../domain/loans/disbursement-account.js';
import {
  disbursementStatuses,
  loanTransactionTypes,
  referenceSources,
  type IofTerms,
  type LoanError,
  type LoanStatus,
  type ReleaseAdjustment,
} from '../../domain/loans/loans.js';
import type { Repayment, RowPart } from '../../domain/loans/allocation.js';
import type { LateChargeRates } from '../../domain/loans/repayment.js';
import { timestampColumn as ts } from './columns.js';
import { creditOffers, simulations } from './credit.js';
import { customers } from './customers.js';
import { environments } from './partners.js';

/**
 * A loan. Created by the API (with its offer's acceptance, in one transaction) and afterwards
 * written only by its `loan/{ln_id}` workflow, which owns `status`. Installments are paid oldest
 * first, so the paid rows are the first `paid_installments` of the schedule.
 */
export const loans = pgTable(
  'loans',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    creditOfferId: text('credit_offer_id')
      .notNull()
      .references(() => creditOffers.id),
    simulationId: text('simulation_id')
      .notNull()
      .references(() => simulations.id),
    status: text('status').$type<LoanStatus>().notNull(),
    /** The simulation's figures and schedule, as the customer signs them. */
    figures: jsonb('figures').$type<SimulationFigures>().notNull(),
    disbursementAccount: jsonb('disbursement_account').$type<DisbursementAccount>().notNull(),
    contractSha256: text('contract_sha256').notNull(),
    /** Where the contract PDF is kept in the file store (the loan id, no personal data). */
    contractKey: text('contract_key').notNull(),
    /** SHA-256 of the signing page's token (the token is derived from the loan id, never stored). */
    signingTokenHash: text('signing_token_hash').notNull(),
    signatureDeadline: ts('signature_deadline').notNull(),
    disbursedAt: ts('disbursed_at'),
    /**
     * The payout's progress (contract §13): `claimed` once ops (or the sandbox) start sending the
     * money — the partner can no longer cancel — then `confirmed` or `failed`.
     */
    disbursementStatus: text('disbursement_status', { enum: disbursementStatuses })
      .notNull()
      .default('pending'),
    /** The IOF rates the loan was priced with: a later release recomputes its IOF at them. */
    iofTerms: jsonb('iof_terms').$type<IofTerms>(),
    /**
     * What a release later than the simulation's `release_date` took off row 1 (null: released on
     * the date priced, or before §13). `figures` hold the repriced loan.
     */
    releaseAdjustment: jsonb('release_adjustment').$type<ReleaseAdjustment>(),
    paidInstallments: integer('paid_installments').notNull().default(0),
    /**
     * The rows the workflow has found unpaid after their due date: 1…`overdue_through`. Those not
     * paid yet are `overdue`; their timer has fired and their event is written.
     */
    overdueThrough: integer('overdue_through').notNull().default(0),
    /** The late-payment terms the loan was made with (LATE_FEE_RATE, LATE_INTEREST_MONTHLY_RATE). */
    lateChargeRates: jsonb('late_charge_rates')
      .$type<LateChargeRates>()
      .notNull()
      .default({ feeRate: '0.02', monthlyInterestRate: '0.01' }),
    /**
     * Where each row stands after the payments (contract §13: any amount, partial rows) and the
     * principal still owed. Null on a loan with no payment recorded since §13: its rows are the
     * first `paid_installments` paid in full (see `repaymentOf`).
     */
    repayment: jsonb('repayment').$type<Repayment>(),
    /**
     * The rows a live agreement took over (contract §17): `renegotiated` while it lives, no late
     * charges; given back by a break, paid by its fulfilment.
     */
    renegotiatedRows: jsonb('renegotiated_rows')
      .$type<number[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    /** The `paid_at` of each paid row, oldest first (loans paid before §13's allocation). */
    paidDates: jsonb('paid_at')
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    /**
     * Money received that belongs back to the borrower (contract §14: above the payoff, after the
     * loan ended, beyond a withdrawal), less what was sent back: the loan's `refunds_payable`.
     */
    refundDueAmount: bigint('refund_due_amount', { mode: 'number' }).notNull().default(0),
    error: jsonb('error').$type<LoanError>(),
    /** `signature_deadline`, or the partner's reason (`requested` when it gave none). */
    cancellationReason: text('cancellation_reason'),
    /** Why a `finished` loan finished otherwise than paid by its borrower: `refinanced` (§17). */
    finishedReason: text('finished_reason').$type<'refinanced'>(),
    /**
     * When the loan was written off (contract §17: a row overdue more than WRITE_OFF_AFTER_DAYS):
     * its principal left the book for `credit_losses`; money received since posts to `recoveries`.
     */
    writtenOffAt: ts('written_off_at'),
    /**
     * Sold (contract §19, docs/assignments.md): the settled assignment and its buyer. The borrower
     * owes as before; money received since is owed to the buyer (`payable_to_assignee`).
     */
    assignmentId: text('assignment_id'),
    assignedTo: jsonb('assigned_to').$type<{ name: string; cnpj: string }>(),
    assignedAt: ts('assigned_at'),
    /**
     * Set when its customer was erased and the loan never became a contract (cancelled before its
     * signatures or its disbursement): its signers, payout account and contract are erased with
     * the customer, and no lookup shows it any more (contract §15).
     */
    erasedAt: ts('erased_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('loans_signing_token_idx').on(t.signingTokenHash),
    index('loans_created_idx').on(t.partnerId, t.environment, t.createdAt, t.id),
    index('loans_customer_idx').on(t.partnerId, t.environment, t.customerId, t.createdAt),
  ],
);

/** Who signs a loan: the customer (position 0) and up to four more. */
export const loanSigners = pgTable(
  'loan_signers',
  {
    loanId: text('loan_id')
      .notNull()
      .references(() => loans.id),
    position: integer('position').notNull(),
    name: text('name').notNull(),
    cpf: text('cpf').notNull(),
    email: text('email'),
    signedAt: ts('signed_at'),
    /**
     * The signature's evidence: the address and user agent it came from, the hash it signed, and
     * how the signer was identified (`email:m***@e***.com`, the channel of the code they entered;
     * `sandbox_api` for the sandbox helper; null for signatures made before codes).
     */
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    signedSha256: text('signed_sha256'),
    signedChannel: text('signed_channel'),
  },
  (t) => [
    primaryKey({ columns: [t.loanId, t.cpf] }),
    uniqueIndex('loan_signers_position_idx').on(t.loanId, t.position),
  ],
);

/**
 * The loan's ledger: one disbursement, one payment per installment (or one payoff for every row
 * left), each written once.
 */
export const loanTransactions = pgTable(
  'loan_transactions',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    loanId: text('loan_id')
      .notNull()
      .references(() => loans.id),
    /**
     * `disbursement`, `payment:{n}` or `payoff`: a retried write finds its step taken and writes
     * nothing.
     */
    step: text('step').notNull(),
    type: text('type', { enum: loanTransactionTypes }).notNull(),
    /** Centavos moved: a Pix's whole amount (any the Pix scheme allows) on the Pix's own. */
    amount: bigint('amount', { mode: 'number' }).notNull(),
    installmentNumber: integer('installment_number'),
    /**
     * A payment's identity, unique per loan and source (contract §13): the same payment is never
     * booked twice, and a Pix's end-to-end id never collides with a reference ops chose.
     */
    reference: text('reference'),
    /** Whose namespace `reference` is in: `pix` (an end-to-end id) or `manual` (ops', the sandbox twin's). */
    referenceSource: text('reference_source', { enum: referenceSources }),
    /** What a payment paid: principal and interest of the installments, and the late charges. */
    principalAmount: integer('principal_amount'),
    interestAmount: integer('interest_amount'),
    lateFeeAmount: integer('late_fee_amount'),
    lateInterestAmount: integer('late_interest_amount'),
    /** The interest not charged because installments were paid before their due dates. */
    discountAmount: integer('discount_amount'),
    /** The part of the money received that is due back to the borrower (`refunds_payable`). */
    refundAmount: bigint('refund_amount', { mode: 'number' }),
    /** What a payment paid of each row. */
    allocation: jsonb('allocation').$type<RowPart[]>(),
    /** Who recorded it by hand (an operator), and who approved it (dual control); null: the system. */
    actor: jsonb('actor').$type<Actor>(),
    approvedBy: jsonb('approved_by').$type<Actor>(),
    occurredAt: ts('occurred_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('loan_transactions_step_idx').on(t.loanId, t.step),
    uniqueIndex('loan_transactions_reference_idx').on(t.loanId, t.referenceSource, t.reference),
    index('loan_transactions_loan_idx').on(t.loanId, t.createdAt, t.id),
  ],
);
