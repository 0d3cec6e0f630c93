import { proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import type { Tenant } from '../../src/domain/tenant.js';
import { hexId } from '../ids.js';
import { databaseWrite } from '../presets.js';
import type { Serialized } from '../step-queue.js';
import { agreementChangedSignal } from './agreement-messages.js';
import type { AlsoDue } from './due-dates.js';
import type { RepaymentProgress } from '../../src/domain/loans/payments.js';

const { liveAgreementDeadline, lapseAgreementAt, breakAgreementAt } =
  proxyActivities<Activities>(databaseWrite);

/** The live agreement's next deadline: its lapse (absent `kind`, as histories recorded it) or break. */
type Waiting = { agreementId: string; deadline: number; kind?: 'break' } | null;

/** The loan's watch on its agreement: its deadline in the watcher's wait, and a way to re-read it. */
export type AgreementWatch = AlsoDue & {
  /** A payment reached the agreement (its break deadline moved): read it again, in turn. */
  changed: () => void;
};

/**
 * Contract §17, in the loan's workflow (behind `patched('agreements')`): the deadline of the
 * loan's live agreement while it waits for the borrower's acceptance or its entry (the end of its
 * first row's due date, the customer's clock), as one more deadline of the due-date watcher's one
 * wait. Read from the record once per run and again, in the loan's step queue, whenever a command
 * signals a change (`agreement-changed`: an agreement made or accepted). Due, the agreement is
 * `lapsed` if the record still has it waiting (`lapseAgreementAt`), then read again. An `active`
 * agreement's deadline is its break (AGREEMENT_BREAK_DAYS after its oldest unpaid row's due date):
 * due, `breakAgreementAt` breaks it if still late. Either may give the loan's rows back:
 * `loanChanged` hears the loan's new progress.
 */
export async function agreementWatch(
  tenant: Tenant,
  loanId: string,
  serialized: Serialized,
  loanChanged?: (progress: RepaymentProgress) => void,
): Promise<AgreementWatch> {
  let waiting: Waiting = await liveAgreementDeadline({ loanId });
  const reread = async () => {
    waiting = await liveAgreementDeadline({ loanId });
  };
  setHandler(agreementChangedSignal, () => {
    void serialized(reread);
  });
  return {
    deadline: () => waiting?.deadline ?? null,
    async fire(deadline) {
      if (waiting) {
        const due = {
          tenant,
          agreementId: waiting.agreementId,
          at: new Date(deadline).toISOString(),
          eventId: hexId('evt'),
        };
        const { progress } =
          waiting.kind === 'break' ? await breakAgreementAt(due) : await lapseAgreementAt(due);
        if (progress) loanChanged?.(progress);
      }
      await reread();
    },
    changed: () => {
      void serialized(reread);
    },
  };
}

/**
 * Two deadlines as the watcher's one `also` (the write-off's and the agreement's): the earlier
 * falls due first; either absent, the other alone, unchanged (so loans before either replay).
 */
export function eitherDue(first?: AlsoDue, second?: AlsoDue): AlsoDue | undefined {
  if (!first || !second) return first ?? second;
  const earlier = () => {
    const a = first.deadline();
    const b = second.deadline();
    if (a === null) return b === null ? null : second;
    return b === null || a <= b ? first : second;
  };
  return {
    deadline: () => earlier()?.deadline() ?? null,
    async fire(deadline) {
      const due = earlier();
      if (due?.deadline() === deadline) await due.fire(deadline);
    },
  };
}
