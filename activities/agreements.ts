import { findAgreement, lapseAgreement, liveAgreementOf } from '../src/db/queries/agreements.js';
import { agreementEventTypes } from '../src/domain/loans/agreements.js';
import type { Tenant } from '../src/domain/tenant.js';
import { presentAgreement } from '../src/presenters/agreements.js';
import { writeWithEvents } from './write-with-events.js';
import type { ActivityDeps } from './index.js';

/** Waiting for the borrower: accepted or not, its entry unpaid. */
const waiting = (status: string) => status === 'pending_acceptance' || status === 'pending_entry';

/** Payment agreements (contract §17), for the loan workflow's watch (workflows/loan/agreements.ts). */
export function createAgreementActivities(deps: ActivityDeps) {
  return {
    /**
     * The loan's live agreement still waiting for its acceptance or its entry, and its deadline
     * (epoch ms: the end of its first row's due date on the customer's clock); null when none.
     */
    async liveAgreementDeadline(input: {
      loanId: string;
    }): Promise<{ agreementId: string; deadline: number } | null> {
      const live = await liveAgreementOf(deps.db, input.loanId);
      if (!live || !waiting(live.status)) return null;
      return { agreementId: live.id, deadline: live.acceptanceDeadline.getTime() };
    },

    /**
     * The agreement's deadline fell due (`at`, the customer's clock): still waiting for its
     * acceptance or its entry, it is `lapsed` with `loan.agreement_lapsed`, in one transaction.
     * A conditional write (a command may have lapsed it first, when read): anything else writes
     * nothing. Answers whether this call lapsed it.
     */
    async lapseAgreementAt(input: {
      tenant: Tenant;
      agreementId: string;
      at: string;
      eventId: string;
    }): Promise<{ lapsed: boolean }> {
      return writeWithEvents<{ lapsed: boolean }>(deps, input.tenant, async (tx) => {
        const at = new Date(input.at);
        const agreement = await findAgreement(tx, input.tenant, input.agreementId);
        // Not yet due (a clock read early), or no longer waiting: nothing to write.
        if (!agreement || at < agreement.acceptanceDeadline)
          return { result: { lapsed: false }, events: [] };
        const lapsed = await lapseAgreement(tx, agreement.id, at);
        if (!lapsed) return { result: { lapsed: false }, events: [] };
        return {
          result: { lapsed: true },
          events: [
            {
              id: input.eventId,
              type: agreementEventTypes.lapsed,
              data: presentAgreement(lapsed),
              createdAt: lapsed.updatedAt,
            },
          ],
        };
      });
    },
  };
}
