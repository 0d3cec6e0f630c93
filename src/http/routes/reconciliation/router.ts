import {
  requestReconciliation,
  type RequestReconciliationDeps,
} from '../../../commands/request-reconciliation.js';
import { findReconciliationReport } from '../../../db/queries/reconciliation.js';
import { businessDate } from '../../../domain/business-date.js';
import { problems, ProblemError } from '../../../errors.js';
import { presentReconciliation } from '../../../presenters/reconciliation.js';
import type { ApiRouter } from '../../api-router.js';
import { reconciliationParams, reconciliationRunSchema, reconciliationSchema } from './schema.js';

/** Pix began on 3 November 2020: no day before it has anything to reconcile. */
const FIRST_PIX_DAY = '2020-11-03';

/** The path's date, checked: a calendar date from Pix's first day to today (São Paulo). */
export function reconciliationDate(value: string, today: string): string {
  const fail = (code: 'invalid_format' | 'out_of_range', message: string) =>
    problems.validation([{ path: 'path.date', code, message }]);
  const at = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00Z`) : undefined;
  if (!at || Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== value)
    throw fail('invalid_format', 'A calendar date, YYYY-MM-DD.');
  if (value < FIRST_PIX_DAY || value > today)
    throw fail('out_of_range', `From ${FIRST_PIX_DAY} to today (${today}, São Paulo).`);
  return value;
}

const notRun = (date: string) =>
  new ProblemError('reconciliation_not_found', `The reconciliation of ${date} has never run.`);

/**
 * `GET /ops/v1/reconciliation/{date}`: the daily reconciliation's report of a date (contract
 * §16); `POST …/{date}/run`: run it (again) now.
 */
export function reconciliationRoutes(
  api: ApiRouter,
  deps: RequestReconciliationDeps & { clock: () => Date },
): void {
  api.add(
    {
      method: 'get',
      path: '/reconciliation/{date}',
      operationId: 'getReconciliation',
      summary: 'A day’s reconciliation with the PSP',
      description:
        'The daily reconciliation’s report of a business date (contract §16): the Pix the PSP received within the day beside the Pix the service booked, devolucoes and payouts likewise (count and centavos per side), the clearing accounts’ movement beside the PSP’s total, and each discrepancy with what the run did. The schedule runs the day before after midnight (RECONCILIATION_TIME, São Paulo); `POST …/run` runs a date on demand. 404 `reconciliation_not_found` for a date never run; 422 for a path that is not a date from 2020-11-03 to today.',
      tag: 'Reconciliation',
      security: 'ops',
      params: reconciliationParams,
      responses: { 200: { description: 'The report.', schema: reconciliationSchema } },
      errors: [404, 422],
    },
    async (ctx, { params }) => {
      const date = reconciliationDate(params.date, businessDate(deps.clock()));
      const found = await findReconciliationReport(deps.db, date);
      if (!found) throw notRun(date);
      ctx.body = presentReconciliation(found.report, found.discrepancies);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/reconciliation/{date}/run',
      operationId: 'runReconciliation',
      summary: 'Run a day’s reconciliation now',
      description:
        'Starts a run of the reconciliation of a business date (a rerun replaces the report and books nothing twice: a Pix the notifications missed is booked once by its end-to-end id). Today’s date reconciles the day so far. Answered 202 once the run is queued; the report (`Location`) reads `running` until it finishes. The `payments` desk.',
      tag: 'Reconciliation',
      security: 'ops',
      roles: ['payments'],
      params: reconciliationParams,
      responses: {
        202: {
          description: 'The run is queued; read the report at `Location`.',
          schema: reconciliationRunSchema,
          headers: { Location: 'Path of the date’s report.' },
        },
      },
      errors: [404, 422],
    },
    async (ctx, { params }) => {
      const date = reconciliationDate(params.date, businessDate(deps.clock()));
      const { report, workflowId } = await requestReconciliation(deps, date);
      ctx.status = 202;
      ctx.set('Location', `/ops/v1/reconciliation/${date}`);
      ctx.body = { date, status: 'running' as const, run: report.runs, workflow_id: workflowId };
    },
  );
}
