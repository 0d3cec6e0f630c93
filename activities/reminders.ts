import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { activeChargeOf, findCharge, type Charge } from '../src/db/queries/charges.js';
import { findCustomer } from '../src/db/queries/customers.js';
import { findLoan, repaymentOf, repaymentTerms, type LoanView } from '../src/db/queries/loans.js';
import {
  findCollectionSchedule,
  hasOptedOut,
  insertRemindersSent,
  markReminderEmailed,
  unsentReminderEmails,
  type NewReminderSent,
} from '../src/db/queries/reminders.js';
import { addDays } from '../src/domain/business-date.js';
import { isPaid, rowValue, type RowState } from '../src/domain/loans/allocation.js';
import { nextAmountDue } from '../src/domain/loans/charges.js';
import {
  nextReminderCheck,
  reminderEventType,
  remindersDueOn,
  type ReminderRow,
} from '../src/domain/reminders/schedule.js';
import type { Tenant } from '../src/domain/tenant.js';
import { ProblemError } from '../src/errors.js';
import { reminderMessage } from '../src/mail/reminder-mail.js';
import { changeLoan } from '../src/temporal/loan-workflows.js';
import { createChargeUpdate } from '../workflows/loan/messages.js';
import type { ReminderPlan } from '../workflows/reminders/messages.js';
import type { ActivityDeps } from './index.js';
import { writeWithEvents } from './write-with-events.js';

/** What reminders need beyond the activities' common deps: the opt-out page of a customer. */
export interface ReminderActivityDeps {
  optOutUrl: (customerId: string) => string;
}

/** A loan with nothing left to look at is re-read this often while it stays active (an agreement may break). */
const IDLE_RECHECK_DAYS = 30;
/**
 * How often a loan of a partner with no schedule (the default) looks for one inside a row's
 * window: weekly, so the many loans of partners without reminders cost a seventh of the daily
 * looks; a schedule set for the first time reaches them within a week (docs/decisions.md).
 */
const UNSCHEDULED_STRIDE_DAYS = 7;

/** Rows statuses reminders know: an unpaid row marked anything else (renegotiated…) is left alone. */
const remindableStatuses = new Set([undefined, 'pending', 'overdue']);

const reminderRows = (loan: LoanView): ReminderRow[] =>
  repaymentOf(loan).rows.map((row) => ({
    number: row.number,
    due_date: row.due_date,
    remindable:
      !isPaid(row) &&
      // Covered by an active agreement (contract §17): its own rows are what is owed.
      !loan.renegotiatedRows.includes(row.number) &&
      remindableStatuses.has((row as RowState & { status?: string }).status),
  }));

/** A stable id from the reminder's key: a retry writes, charges and mails under the same one. */
const keyedId = (prefix: string, ...parts: (string | number)[]) =>
  `${prefix}_${createHash('sha256').update(parts.join(':')).digest('hex').slice(0, 32)}`;

export function createReminderActivities(deps: ActivityDeps) {
  const loanDeps = {
    temporal: deps.temporal,
    taskQueue: deps.taskQueue,
    sandboxDisbursementDelayMs: 0,
  };

  async function loanOf(tenant: Tenant, loanId: string): Promise<LoanView> {
    const loan = await findLoan(deps.db, tenant, loanId);
    if (!loan) throw ApplicationFailure.nonRetryable(`loan ${loanId} not found`, 'loan_not_found');
    return loan;
  }

  /**
   * A live charge for the row's amount that day, or a new one (scope `next` for the oldest unpaid
   * row, as `POST …/charges` makes it: a production loan's is a cobv at the PSP; else scope
   * `amount`). Keyed by (loan, row, step): a retry finds the charge its first attempt made. Null
   * when the loan's rules refuse a charge now (it ended meanwhile).
   */
  async function chargeFor(
    loan: LoanView,
    row: RowState,
    offsetDays: number,
    amount: number,
    oldest: boolean,
  ): Promise<Charge | null> {
    const live = await activeChargeOf(deps.db, loan.id);
    if (
      live &&
      live.amount === amount &&
      live.expiresAt.getTime() > Date.now() + loan.clockOffsetMs &&
      (live.scope === 'amount' || (live.scope === 'next' && oldest))
    )
      return live;
    const chargeId = keyedId('chg', 'reminder', loan.id, row.number, offsetDays);
    try {
      const created = await changeLoan(
        loanDeps,
        loan,
        createChargeUpdate,
        [
          oldest
            ? { chargeId, scope: 'next', hasCnpj: false }
            : { chargeId, scope: 'amount', amount, hasCnpj: false },
        ],
        chargeId,
      );
      if ('withdrawn' in created) return null;
      return (await findCharge(deps.db, loan, created.chargeId)) ?? null;
    } catch (error) {
      // The loan's rules refuse a charge now (it ended, nothing to charge), or the PSP refuses
      // it (502, not a passing outage): remind without one. A PSP that is away (503) is retried.
      if (error instanceof ProblemError && (error.status < 500 || error.code === 'psp_refused'))
        return null;
      throw error;
    }
  }

  return {
    /**
     * The next business date after `after` worth a look (the next day inside a row's window; a
     * week on for a partner without a schedule), or the loan's end.
     */
    async planReminders(input: {
      tenant: Tenant;
      loanId: string;
      after: string;
    }): Promise<ReminderPlan> {
      const loan = await loanOf(input.tenant, input.loanId);
      if (loan.status !== 'active') return { ended: true };
      const schedule = await findCollectionSchedule(deps.db, input.tenant);
      const stride = schedule && schedule.steps.length > 0 ? 1 : UNSCHEDULED_STRIDE_DAYS;
      const next = nextReminderCheck(reminderRows(loan), addDays(input.after, stride - 1));
      return { ended: false, next: next ?? addDays(input.after, IDLE_RECHECK_DAYS) };
    },

    /**
     * The reminders of business date `date` under the partner's schedule as it stands now, for
     * the rows unpaid now: per (row, step) the records of its channels (once: a unique key), the
     * `installment.reminder` event in the same transaction, then the e-mails not yet handed over.
     */
    async sendReminders(input: { tenant: Tenant; loanId: string; date: string }): Promise<number> {
      const { tenant } = input;
      const loan = await loanOf(tenant, input.loanId);
      if (loan.status === 'active') {
        const schedule = await findCollectionSchedule(deps.db, tenant);
        const due = remindersDueOn(schedule?.steps ?? [], reminderRows(loan), input.date);
        const customer = await findCustomer(deps.db, tenant, loan.customerId);
        const emailable =
          customer !== undefined &&
          customer.erasedAt === null &&
          !(await hasOptedOut(deps.db, tenant, loan.customerId));
        const repayment = repaymentOf(loan);
        const terms = repaymentTerms(loan);
        const oldestUnpaid = repayment.rows.find((row) => !isPaid(row))?.number;
        for (const { row: reminded, step } of due) {
          const row = repayment.rows.find((r) => r.number === reminded.number)!;
          const oldest = row.number === oldestUnpaid;
          const amount = oldest
            ? nextAmountDue(repayment, input.date, terms)
            : rowValue(row, input.date, terms);
          const email = emailable && step.channels.includes('email');
          const charge = email
            ? await chargeFor(loan, row, step.offset_days, amount, oldest)
            : null;
          const amountDue = charge?.amount ?? amount;
          const key = [loan.id, row.number, step.offset_days] as const;
          const eventId = keyedId('evt', 'reminder', ...key);
          const records: NewReminderSent[] = (['webhook', 'email'] as const)
            .filter((channel) => (channel === 'email' ? email : step.channels.includes(channel)))
            .map((channel) => ({
              id: keyedId('rmd', ...key, channel),
              ...tenant,
              loanId: loan.id,
              installmentNumber: row.number,
              offsetDays: step.offset_days,
              channel,
              stepDate: input.date,
              amountDue,
              chargeId: charge?.id ?? null,
              eventId: channel === 'webhook' ? eventId : null,
            }));
          await writeWithEvents(deps, tenant, async (tx) => {
            const written = await insertRemindersSent(tx, records);
            const announce = written.some((record) => record.channel === 'webhook');
            return {
              result: undefined,
              events: announce
                ? [
                    {
                      id: eventId,
                      type: reminderEventType,
                      createdAt: new Date(),
                      data: {
                        loan_id: loan.id,
                        customer_id: loan.customerId,
                        offset_days: step.offset_days,
                        channels: step.channels,
                        installment: {
                          number: row.number,
                          due_date: row.due_date,
                          amount_due: amountDue,
                        },
                        charge: charge ? { id: charge.id, br_code: charge.brCode } : null,
                      },
                    },
                  ]
                : [],
            };
          });
        }
      }
      return sendPendingEmails(tenant, loan);
    },
  };

  /**
   * Hands the SMTP server each recorded e-mail reminder of the loan it has not taken yet, then
   * marks it: a crash between the two sends it again on the retry, under the same Message-ID.
   */
  async function sendPendingEmails(tenant: Tenant, loan: LoanView): Promise<number> {
    const pending = await unsentReminderEmails(deps.db, tenant, loan.id);
    if (pending.length === 0) return 0;
    const customer = await findCustomer(deps.db, tenant, loan.customerId);
    const optedOut = await hasOptedOut(deps.db, tenant, loan.customerId);
    const reminders = deps.reminders;
    for (const record of pending) {
      const row = repaymentOf(loan).rows.find((r) => r.number === record.installmentNumber);
      if (customer && customer.erasedAt === null && !optedOut && row && reminders) {
        const charge = record.chargeId ? await findCharge(deps.db, tenant, record.chargeId) : null;
        await deps.approvals.mailer.send(
          reminderMessage({
            to: customer.email,
            customerName: customer.name,
            installmentNumber: record.installmentNumber,
            dueDate: row.due_date,
            date: record.stepDate,
            amountDue: record.amountDue,
            brCode: charge?.brCode ?? null,
            optOutUrl: reminders.optOutUrl(loan.customerId),
            messageId: `<${record.id}@reminders.embedded-credit>`,
          }),
        );
      }
      await markReminderEmailed(deps.db, record.id);
    }
    return pending.length;
  }
}
