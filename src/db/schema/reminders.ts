import { integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { environments } from '../../domain/environments.js';
import { reminderChannels, type ReminderStep } from '../../domain/reminders/schedule.js';
import { timestampColumn as ts } from './columns.js';
import { customers } from './customers.js';
import { loans } from './loans.js';

/**
 * A partner's régua de cobrança in one environment (contract §17): `PUT /v3/collections/schedule`
 * replaces it whole. No row: no reminders. Every loan's reminders workflow reads it afresh each
 * day it looks, so a change applies to loans already running.
 */
export const collectionSchedules = pgTable(
  'collection_schedules',
  {
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    steps: jsonb('steps').$type<ReminderStep[]>().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.partnerId, t.environment] })],
);

/**
 * One reminder of one row at one step on one channel: written before the reminder leaves (with
 * the `installment.reminder` event in the same transaction for the webhook channel), so each
 * (loan, installment, step, channel) happens once across restarts and retries. An e-mail's row is
 * written first and `emailed_at` set once the SMTP server took it.
 */
export const remindersSent = pgTable(
  'reminders_sent',
  {
    id: text('id').primaryKey(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    loanId: text('loan_id')
      .notNull()
      .references(() => loans.id),
    installmentNumber: integer('installment_number').notNull(),
    offsetDays: integer('offset_days').notNull(),
    channel: text('channel', { enum: reminderChannels }).notNull(),
    /** The business date of the step (due date + offset). */
    stepDate: text('step_date').notNull(),
    amountDue: integer('amount_due').notNull(),
    chargeId: text('charge_id'),
    eventId: text('event_id'),
    emailedAt: ts('emailed_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('reminders_sent_once_idx').on(
      t.loanId,
      t.installmentNumber,
      t.offsetDays,
      t.channel,
    ),
  ],
);

/**
 * A customer who asked, through the link in a reminder e-mail, to receive no more reminder
 * e-mails. The partner's `installment.reminder` events go on.
 */
export const reminderOptOuts = pgTable('reminder_opt_outs', {
  customerId: text('customer_id')
    .primaryKey()
    .references(() => customers.id),
  partnerId: text('partner_id').notNull(),
  environment: text('environment', { enum: environments }).notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});
