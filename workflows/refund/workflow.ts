import { continueAsNew, proxyActivities, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { historyFull } from '../history.js';
import { databaseWrite } from '../presets.js';
import type { RefundInput } from './messages.js';

const { requestRefund } = proxyActivities<Activities>(databaseWrite);
/**
 * The PSP's calls (asking for each devolução, then how each stands): a minute is the client's 15 s
 * timeout with room; retried — by the same devolução ids, so the PSP makes one of each — for as
 * long as the PSP is away.
 */
const { sendDevolucao, settleDevolucoes } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '5 minutes' },
});

/** The PSP usually settles a devolução in seconds: asked again after 2 s, doubling to 10 min. */
const FIRST_POLL_MS = 2_000;
const LAST_POLL_MS = 10 * 60_000;

/**
 * Money due back on a production loan leaves by devolução (contract §16): one workflow per refund
 * (`refund/{rfd_id}`). An automatic one waits REFUND_AFTER (a durable timer), then returns
 * whatever is still due back and not on its way already; an ops one (approved) has its devoluções
 * written. Each is asked of the PSP by its own id, then followed until the PSP settles it: the
 * PSP's notification books it as soon as it comes, and this asks the PSP (`GET …/devolucao/{id}`)
 * after 2 s, 4 s, … up to every 10 minutes in case it never does. Answers how the refund ended.
 */
export async function refundWorkflow(input: RefundInput): Promise<string> {
  const { refundId } = input;
  if (input.notBefore !== undefined) {
    setCurrentDetails(
      `**Refund** ${refundId}: due back since the loan's Pix; returned by devolução at ${new Date(input.notBefore).toISOString()} if still due`,
    );
    await sleep(Math.max(0, input.notBefore - Date.now()));
  }
  let steps = await requestRefund({ refundId, loanId: input.loanId });
  if (steps.length === 0) {
    setCurrentDetails(`**Refund** ${refundId}: nothing left to return by devolução`);
    return 'nothing_due';
  }
  for (const step of steps) if (step.status === 'requested') await sendDevolucao({ id: step.id });
  let pollMs = input.pollMs ?? FIRST_POLL_MS;
  for (;;) {
    steps = await settleDevolucoes({ refundId });
    const open = steps.filter(
      (step) => step.status === 'requested' || step.status === 'processing',
    );
    if (open.length === 0) break;
    setCurrentDetails(
      `**Refund** ${refundId}: ${open.length} of ${steps.length} devoluções at the PSP; asking again in ${pollMs / 1000} s`,
    );
    await sleep(pollMs);
    pollMs = Math.min(pollMs * 2, LAST_POLL_MS);
    if (historyFull())
      await continueAsNew<typeof refundWorkflow>({ refundId, loanId: input.loanId, pollMs });
  }
  const failed = steps.filter((step) => step.status === 'failed').length;
  const outcome = failed === 0 ? 'returned' : failed === steps.length ? 'failed' : 'partly_failed';
  setCurrentDetails(`**Refund** ${refundId}: ${outcome} (${steps.length} devoluções)`);
  return outcome;
}
