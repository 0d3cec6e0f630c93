/**
 * The task queue webhook deliveries run on, beside the one of everything else (`taskQueue`,
 * TEMPORAL_TASK_QUEUE). A partner whose endpoints fail piles up retries — thousands of delivery
 * workflows — and on a shared queue a partner's Update (a biometrics session, a signature, a
 * payment) waited behind them: 770 workflow tasks 30 s deep under the fuzzer. On a queue of its
 * own a delivery backlog delays only deliveries. The worker process polls both.
 */
export const deliveryTaskQueue = (taskQueue: string): string => `${taskQueue}-webhooks`;
