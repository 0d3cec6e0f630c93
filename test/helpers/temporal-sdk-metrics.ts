/**
 * The Temporal SDK's metrics the alert rules and the dashboard read. The SDK declares them in its
 * native Core, so no source of ours names them: test/e2e/webhook-crash-safety.test.ts scrapes a
 * real worker process and checks each appears on its `/metrics` (a failed workflow task made on
 * purpose brings the failure counter), and test/unit/alert-rules.test.ts counts them as exported.
 */
export const temporalSdkMetrics = [
  'temporal_workflow_task_execution_failed_total',
  'temporal_workflow_task_schedule_to_start_latency_bucket',
  'temporal_workflow_task_queue_poll_succeed_total',
] as const;
