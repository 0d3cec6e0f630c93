import { continueAsNew, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { lastPassedReminderDate, reminderMoment } from '../../src/domain/reminders/schedule.js';
import { customerClock } from '../clock.js';
import { historyFull } from '../history.js';
import { databaseWrite } from '../presets.js';
import type { RemindersInput } from './messages.js';

const { planReminders } = proxyActivities<Activities>(databaseWrite);
/**
 * Sending a day's reminders: the charge (an Update of the loan's workflow, a PSP call for a
 * production loan), the records and events, then the e-mails. Each part is idempotent (keys from
 * the loan, row, step and channel), so a retry after any failure sends nothing twice.
 */
const { sendReminders } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // As presets.ts's: a killed worker's attempt is retried elsewhere after 10 s, not 2 minutes.
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '5 minutes' },
});

/**
 * A loan's reminders (contract §17, docs/architecture.md "Reminders"): asks which business date
 * next needs a look — only dates inside some unpaid row's window [due − 10, due + 90] can matter —
 * sleeps on the customer's clock until 09:00 (São Paulo) that day, and sends what the partner's
 * schedule, read then, says is due that day. Ends when the loan does.
 */
export async function remindersWorkflow(input: RemindersInput): Promise<void> {
  const clock = customerClock(input.customerId, input.clock);
  const tenant = { partnerId: input.partnerId, environment: input.environment };
  let checked = input.checkedThrough ?? lastPassedReminderDate(clock.now());
  for (;;) {
    const plan = await planReminders({ tenant, loanId: input.loanId, after: checked });
    if (plan.ended) break;
    setCurrentDetails(`**Reminders** of ${input.loanId}: next look on ${plan.next} at 09:00`);
    await clock.until(reminderMoment(plan.next), () => false);
    await sendReminders({ tenant, loanId: input.loanId, date: plan.next });
    checked = plan.next;
    if (historyFull(input.historyLimit)) {
      await clock.settled();
      await continueAsNew<typeof remindersWorkflow>({
        ...input,
        checkedThrough: checked,
        clock: clock.state(),
      });
    }
  }
  setCurrentDetails(`**Reminders** of ${input.loanId}: the loan has ended`);
  await clock.settled();
}
