import { sql } from 'drizzle-orm';
import { index, integer, jsonb, numeric, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import type { CreditOfferStatus } from '../../domain/credit/offers.js';
import type { SimulationFigures } from '../../domain/credit/simulation.js';
import { timestampColumn as ts } from './columns.js';
import { customers } from './customers.js';
import { environments } from './partners.js';

/**
 * A pre-approved credit offer. Written only by the customer's credit-offers workflow (through its
 * activities), which owns `status`. Amounts are centavos; the rate is exact decimal text.
 */
export const creditOffers = pgTable(
  'credit_offers',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    status: text('status').$type<CreditOfferStatus>().notNull(),
    approvedAmount: integer('approved_amount').notNull(),
    minAmount: integer('min_amount').notNull(),
    monthlyInterestRate: numeric('monthly_interest_rate', { precision: 10, scale: 6 }).notNull(),
    minInstallments: integer('min_installments').notNull(),
    maxInstallments: integer('max_installments').notNull(),
    validUntil: ts('valid_until').notNull(),
    /** The loan that accepted the offer (kept after it ends, as the offer's history). */
    loanId: text('loan_id'),
    /** When the offer's loan finished: the offer is spent and a new one may follow. */
    spentAt: ts('spent_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    // At most one live offer per customer, whatever races the workflow's guard might miss.
    uniqueIndex('credit_offers_one_live_idx')
      .on(t.customerId)
      .where(sql`${t.status} = 'available' or (${t.status} = 'accepted' and ${t.spentAt} is null)`),
    index('credit_offers_created_idx').on(t.partnerId, t.environment, t.createdAt, t.id),
    index('credit_offers_valid_until_idx').on(t.partnerId, t.environment, t.validUntil, t.id),
    index('credit_offers_customer_idx').on(t.partnerId, t.environment, t.customerId, t.createdAt),
  ],
);

/** A priced simulation of a credit offer: the figures and schedule a loan would take. */
export const simulations = pgTable(
  'simulations',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    creditOfferId: text('credit_offer_id')
      .notNull()
      .references(() => creditOffers.id),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    /** Every figure the partner sees, exactly as computed (centavos, 4-decimal rates, dates). */
    figures: jsonb('figures').$type<SimulationFigures>().notNull(),
    validUntil: ts('valid_until').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('simulations_offer_idx').on(t.creditOfferId, t.createdAt)],
);
