import {
  findAgreement,
  lapseAgreement,
  liveAgreementOf,
  changeAgreement,
  type Agreement,
} from '../src/db/queries/agreements.js';
import { lockAndReadLoan, repaymentOf } from '../src/db/queries/loans.js';
import { startOfBusinessDate } from '../src/domain/business-date.js';
import { agreementEventTypes, breaksOn } from '../src/domain/loans/agreements.js';
import type { RepaymentProgress } from '../src/domain/loans/payments.js';
import type { Tenant } from '../src/domain/tenant.js';
import { presentAgreement } from '../src/presenters/agreements.js';
import type { DbOrTx } from '../src/db/client.js';
import { writeWithEvents } from './write-with-events.js';
import { undoAgreementOnLoan } from './agreement-payments.js';
import { progressOf } from './loans.js';
import type { ActivityDeps } from './index.js';

/** Waiting for the borrower: accepted or not, its entry unpaid. */
const waiting = (status: string) => status === 'pending_acceptance' || status === 'pending_entry';

/** AGREEMENT_BREAK_DAYS when unset (contract §17). */
export const DEFAULT_AGREEMENT_BREAK_DAYS = 30;

/** The instant an active agreement breaks (its oldest unpaid row overdue more than `days`). */
function breakDeadline(agreement: Agreement, days: number): number | null {
  const date = agreement.book ? breaksOn(agreement.book.repayment, days) : null;
  return date === null ? null : startOfBusinessDate(date);
}

/** Payment agreements (contract §17), for the loan workflow's watch (workflows/loan/agreements.ts). */
export function createAgreementActivities(deps: ActivityDeps) {
  const breakDays = deps.loans.agreementBreakDays ?? DEFAULT_AGREEMENT_BREAK_DAYS;

  /**
   * Ends the agreement on its loan (the loan's row locked): what money reached it undone
   * (`undoAgreementOnLoan`), then `end` writes its status. Answers the loan's progress when the
   * loan changed.
   */
  const endOnLoan = async (
    tx: DbOrTx,
    tenant: Tenant,
    agreement: Agreement,
    at: string,
    end: () => Promise<Agreement | undefined>,
  ): Promise<{ ended: Agreement | undefined; progress?: RepaymentProgress }> => {
    const loan = agreement.book ? await lockAndReadLoan(tx, tenant, agreement.loanId) : undefined;
    const ended = await end();
    if (!ended || !loan) return { ended };
    await undoAgreementOnLoan(tx, tenant, loan, agreement, at);
    const after = await lockAndReadLoan(tx, tenant, agreement.loanId);
    return { ended, progress: progressOf(repaymentOf(after!)) };
  };

  return {
    /**
     * The loan's live agreement and its next deadline (epoch ms, the customer's clock): waiting
     * for its acceptance or its entry, the end of its first row's due date (`lapse`); `active`,
     * the start of the day its oldest unpaid row has been overdue more than AGREEMENT_BREAK_DAYS
     * (`break`). Null when none.
     */
    async liveAgreementDeadline(input: {
      loanId: string;
    }): Promise<{ agreementId: string; deadline: number; kind?: 'break' } | null> {
      const live = await liveAgreementOf(deps.db, input.loanId);
      if (!live) return null;
      if (waiting(live.status))
        return { agreementId: live.id, deadline: live.acceptanceDeadline.getTime() };
      const deadline = breakDeadline(live, breakDays);
      return deadline === null ? null : { agreementId: live.id, deadline, kind: 'break' };
    },

    /**
     * The agreement's deadline fell due (`at`, the customer's clock): still waiting for its
     * acceptance or its entry, it is `lapsed` with `loan.agreement_lapsed`, in one transaction —
     * and a payment that reached it meanwhile (an entry paid in part) is given back to the loan's
     * rows as §13 would have allocated it. A conditional write (a command may have lapsed it
     * first, when read): anything else writes nothing. Answers whether this call lapsed it, and
     * the loan's progress when its rows changed.
     */
    async lapseAgreementAt(input: {
      tenant: Tenant;
      agreementId: string;
      at: string;
      eventId: string;
    }): Promise<{ lapsed: boolean; progress?: RepaymentProgress }> {
      return writeWithEvents<{ lapsed: boolean; progress?: RepaymentProgress }>(
        deps,
        input.tenant,
        async (tx) => {
          const at = new Date(input.at);
          const agreement = await findAgreement(tx, input.tenant, input.agreementId);
          // Not yet due (a clock read early), or no longer waiting: nothing to write.
          if (!agreement || at < agreement.acceptanceDeadline)
            return { result: { lapsed: false }, events: [] };
          const { ended, progress } = await endOnLoan(tx, input.tenant, agreement, input.at, () =>
            lapseAgreement(tx, agreement.id, at),
          );
          if (!ended) return { result: { lapsed: false }, events: [] };
          return {
            result: { lapsed: true, ...(progress ? { progress } : {}) },
            events: [
              {
                id: input.eventId,
                type: agreementEventTypes.lapsed,
                data: presentAgreement(ended, deps.loans.agreementAcceptanceUrl),
                createdAt: ended.updatedAt,
              },
            ],
          };
        },
      );
    },

    /**
     * An active agreement's break deadline fell due (`at`): a row of it still overdue more than
     * AGREEMENT_BREAK_DAYS, it is `broken` (`loan.agreement_broken`) and the loan's rows come
     * back as they stood, less what was paid, allocated by §13 with late charges from their own
     * due dates (`undoAgreementOnLoan`), in one transaction. Paid meanwhile, or not due yet,
     * nothing is written. Answers the loan's progress when it broke.
     */
    async breakAgreementAt(input: {
      tenant: Tenant;
      agreementId: string;
      at: string;
      eventId: string;
    }): Promise<{ broken: boolean; progress?: RepaymentProgress }> {
      return writeWithEvents<{ broken: boolean; progress?: RepaymentProgress }>(
        deps,
        input.tenant,
        async (tx) => {
          // The loan's lock first: a payment racing the break is either before it or after it.
          const first = await findAgreement(tx, input.tenant, input.agreementId);
          if (first) await lockAndReadLoan(tx, input.tenant, first.loanId);
          const agreement = first && (await findAgreement(tx, input.tenant, input.agreementId));
          const deadline = agreement && breakDeadline(agreement, breakDays);
          if (
            !agreement ||
            agreement.status !== 'active' ||
            deadline === null ||
            Date.parse(input.at) < deadline!
          )
            return { result: { broken: false }, events: [] };
          const { ended, progress } = await endOnLoan(tx, input.tenant, agreement, input.at, () =>
            changeAgreement(tx, agreement.id, { status: 'broken', endedAt: new Date(input.at) }),
          );
          return {
            result: { broken: true, ...(progress ? { progress } : {}) },
            events: [
              {
                id: input.eventId,
                type: agreementEventTypes.broken,
                data: presentAgreement(ended!, deps.loans.agreementAcceptanceUrl),
                createdAt: ended!.updatedAt,
              },
            ],
          };
        },
      );
    },
  };
}
