import type { z } from 'zod';
import type { SmokeCheck } from '../db/queries/smoke-checks.js';
import type { smokeCheckSchema } from '../http/routes/smoke-checks/schema.js';

export function presentSmokeCheck(check: SmokeCheck): z.infer<typeof smokeCheckSchema> {
  return {
    id: check.id,
    status: check.status,
    delay_ms: check.delayMs,
    workflow_id: check.workflowId,
    completed_by: check.completedBy,
    created_at: check.createdAt.toISOString(),
    completed_at: check.completedAt?.toISOString() ?? null,
  };
}
