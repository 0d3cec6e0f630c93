import { proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import type { Tenant } from '../../src/domain/tenant.js';
import { hexId } from '../ids.js';
import { databaseWrite } from '../presets.js';
import type { Serialized } from '../step-queue.js';
import { agreementChangedSignal } from './agreement-messages.js';
import type { AlsoDue } from './due-dates.js';

const { liveAgreementDeadline, lapseAgreementAt } = proxyActivities<Activities>(databaseWrite);

type Waiting = { agreementId: string; deadline: number } | null;

/**
 * Contract §17, in the loan's workflow (behind `patched('agreements')`): the deadline of the
 * loan's live agreement while it waits for the borrower's acceptance or its entry (the end of its
 * first row's due date, the customer's clock), as one more deadline of the due-date watcher's one
 * wait. Read from the record once per run and again, in the loan's step queue, whenever a command
 * signals a change (`agreement-changed`: an agreement made or accepted). Due, the agreement is
 * `lapsed` if the record still has it waiting (`lapseAgreementAt`), then read again.
 */
export async function agreementWatch(
  tenant: Tenant,
  loanId: string,
  serialized: Serialized,
): Promise<AlsoDue> {
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
      if (waiting)
        await lapseAgreementAt({
          tenant,
          agreementId: waiting.agreementId,
          at: new Date(deadline).toISOString(),
          eventId: hexId('evt'),
        });
      await reread();
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
