import { proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { hexId, pixEventIds } from '../ids.js';

/**
 * Books a Pix on its loan through the loan's workflow, which waits for its turn among the loan's
 * steps: as long as a payment takes, and retried for as long as the database or the server is
 * away (the Pix is stored: nothing is lost meanwhile).
 */
const { settlePix } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * One per Pix received for a charge (`pix/{end_to_end_id}`), started through the outbox by the
 * notification that stored it (the PSP's, or the sandbox's payment), so a Pix notified twice starts
 * one workflow. Its one step books the Pix on its loan (see `settlePix`). Answers the loan's
 * status after it, or `unmatched`.
 */
export async function pixWorkflow(input: { endToEndId: string }): Promise<string> {
  setCurrentDetails(`**Pix** ${input.endToEndId}: booking it on its loan`);
  const outcome = await settlePix({
    endToEndId: input.endToEndId,
    transactionId: hexId('txn'),
    eventIds: pixEventIds(),
  });
  setCurrentDetails(
    `**Pix** ${input.endToEndId}: ${outcome ? `booked; the loan is ${outcome.status}` : 'matches no charge'}`,
  );
  return outcome?.status ?? 'unmatched';
}
