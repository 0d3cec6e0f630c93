import type { AppContext } from '../../context.js';
import { html } from '../hosted/respond.js';
import type { ActionDeps } from './actions.js';
import { CONSOLE_PATH, consolePage, escapeHtml, roleName } from './layout.js';

/** Shared answers of the console's pages: refused, not found, and the lists' paging. */
const pageContextOf = (ctx: AppContext) => ({
  operator: ctx.state.operator,
  csrf: ctx.state.csrf ?? '',
});

/** 403: the operator lacks the role of the ops API's operation behind this page. */
export function forbiddenPage(ctx: AppContext, deps: ActionDeps, operationId: string): void {
  const roles = deps.operation(operationId).roles ?? [];
  html(
    ctx,
    403,
    consolePage(
      'Acesso negado',
      pageContextOf(ctx),
      `<p>Esta página é de quem tem o papel ${escapeHtml(roles.map(roleName).join(' ou '))}.</p>
<p><a href="${CONSOLE_PATH}">Voltar ao início</a></p>`,
    ),
  );
}

export function notFoundPage(ctx: AppContext, text: string): void {
  html(
    ctx,
    404,
    consolePage(
      'Não encontrado',
      pageContextOf(ctx),
      `<p>${escapeHtml(text)}</p><p><a href="${CONSOLE_PATH}">Voltar ao início</a></p>`,
    ),
  );
}

/** `?limit=` as the API takes it (1–100, default 20); anything else is the default. */
export function listLimit(ctx: AppContext): number {
  const limit = Number(ctx.query.limit);
  return Number.isInteger(limit) && limit >= 1 && limit <= 100 ? limit : 20;
}

/** `?starting_after=` when it is an id of this kind (`prefix_…`); else the list's start. */
export function cursorOf(ctx: AppContext, prefix: string, pattern?: RegExp): string | undefined {
  const value = ctx.query.starting_after;
  if (typeof value !== 'string') return undefined;
  return (pattern ?? new RegExp(`^${prefix}_[A-Za-z0-9]{1,64}$`)).test(value) ? value : undefined;
}
