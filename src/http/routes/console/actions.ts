import compose from 'koa-compose';
import type { Middleware } from 'koa';
import type { z } from 'zod';
import { problems } from '../../../errors.js';
import { toFieldErrors } from '../../validate.js';
import type { Db } from '../../../db/client.js';
import { findAudit, type AuditEntry } from '../../../db/queries/operators.js';
import { hasRole, type Operator, type OperatorRole } from '../../../domain/operators.js';
import type { AppContext, AppState } from '../../context.js';
import { requireRoles } from '../../middleware/ops-auth.js';
import { code, escapeHtml, notice, when } from './layout.js';

/**
 * An action of the console is the ops API's command of the same `operationId`, run the way the ops
 * API runs it: audited first (the same audit row, refusals included), then the same roles
 * (`rolesOf` reads them off the ops API's own operation, so the two cannot drift), then the same
 * command with the signed-in operator as actor. The page then shows the outcome and the audit line
 * the action wrote.
 */
export interface ActionDeps {
  db: Db;
  /** The ops API's audit middleware (`opsAudit`), given an operation id. */
  audit: (operationId: string) => Middleware<AppState>;
  /** The ops API's operation of this id: its roles (none: any operator) and body schema. */
  operation: (operationId: string) => OpsOperation;
}

export interface OpsOperation {
  roles?: readonly OperatorRole[] | undefined;
  body?: z.ZodType | undefined;
}

/**
 * A form's fields as the ops API's operation validates its JSON body, with the same schema:
 * every bad field reported (422, audited as over the API), nothing run.
 */
export function bodyFor<T>(deps: ActionDeps, operationId: string, input: unknown): T {
  const schema = deps.operation(operationId).body;
  if (!schema) throw new Error(`the ops operation ${operationId} takes no body`);
  const parsed = schema.safeParse(input);
  if (!parsed.success)
    throw problems.validation(parsed.error.issues.flatMap((issue) => toFieldErrors('body', issue)));
  return parsed.data as T;
}

export interface ActionOutcome {
  /** 200 when the command ran (or was held for approval); the problem's status otherwise. */
  status: number;
  /** HTML: the outcome, then the audit line. */
  html: string;
}

/** Whether the operator may run the ops API's operation (its form is shown only then). */
export const mayRun = (deps: ActionDeps, operator: Operator, operationId: string) => {
  const roles = deps.operation(operationId).roles;
  return !roles || hasRole(operator, roles);
};

export async function runAction(
  ctx: AppContext,
  deps: ActionDeps,
  operationId: string,
  command: () => Promise<string>,
): Promise<ActionOutcome> {
  let done: string | undefined;
  const roles = deps.operation(operationId).roles;
  await compose<AppContext>([
    deps.audit(operationId),
    ...(roles ? [requireRoles(roles)] : []),
    async () => {
      done = await command();
      // As the ops API answers: 200, or 202 where the command was held for approval.
      if (ctx.status !== 202) ctx.status = 200;
    },
  ] as never)(ctx);
  // The command's own answer (a JSON body, a Location) is not what the browser gets.
  ctx.remove('Location');
  const audited = ctx.state.auditId ? await findAudit(deps.db, ctx.state.auditId) : undefined;
  const problem = ctx.body as { title?: string; detail?: string; code?: string } | undefined;
  const failed = done === undefined || ctx.status >= 400;
  const status = failed ? (ctx.status >= 400 ? ctx.status : 500) : 200;
  const outcome = failed
    ? notice(
        'error',
        `<p><strong>${escapeHtml(status === 403 ? 'Recusado' : 'Não foi feito')}:</strong> ${escapeHtml(
          problem?.detail ?? problem?.title ?? 'erro inesperado',
        )}</p>${problem?.code ? `<p class="muted">Código: ${code(problem.code)}</p>` : ''}`,
      )
    : notice('ok', done!);
  return { status, html: outcome + auditLines(audited ? [audited] : []) };
}

export function auditLines(entries: AuditEntry[]): string {
  if (entries.length === 0) return '';
  return `<section aria-label="Registro de auditoria"><h2>Registro de auditoria</h2><ul class="audit">${entries
    .map(
      (entry) =>
        `<li>${when(entry.startedAt)} · ${code(entry.actorId)} · ${code(entry.operationId)} · ${escapeHtml(
          entry.method,
        )} ${code(entry.path)} → ${entry.status ?? '…'}${entry.problemCode ? ` ${code(entry.problemCode)}` : ''} · ${code(entry.id)}</li>`,
    )
    .join('')}</ul></section>`;
}
