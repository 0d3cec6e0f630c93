import { listAudit } from '../../../db/queries/operators.js';
import { pageOf } from '../../../db/pagination.js';
import { html } from '../hosted/respond.js';
import { auditDays } from '../operators/router.js';
import { mayRun } from './actions.js';
import { CONSOLE_PATH, code, consolePage, escapeHtml, nextPage, table, when } from './layout.js';
import { cursorOf, forbiddenPage, listLimit } from './pages.js';
import { operatorOf, pageContext, type ConsoleRoutes } from './router.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const TEXT = /^[\w.:-]{1,64}$/;

/**
 * The audit trail (`GET /ops/v1/audit`, administrators only), newest first, filtered by actor,
 * operation and days (America/Sao_Paulo, both included), paged with the API's cursor.
 */
export function auditPages({ router, deps, staff }: ConsoleRoutes): void {
  router.get('/audit', ...staff, async (ctx) => {
    if (!mayRun(deps, operatorOf(ctx), 'listAudit')) return forbiddenPage(ctx, deps, 'listAudit');
    const text = (name: string, pattern: RegExp) => {
      const value = ctx.query[name];
      return typeof value === 'string' && pattern.test(value.trim()) ? value.trim() : undefined;
    };
    const filters = {
      actor_id: text('actor_id', TEXT),
      operation_id: text('operation_id', TEXT),
      from: text('from', DAY),
      to: text('to', DAY),
    };
    const limit = listLimit(ctx);
    const rows = await listAudit(deps.db, {
      limit,
      startingAfter: cursorOf(ctx, 'aud'),
      actorId: filters.actor_id,
      operationId: filters.operation_id,
      ...auditDays(filters.from, filters.to),
    });
    const page = pageOf(rows ?? [], limit);
    const input = (name: keyof typeof filters, label: string, type = 'text') =>
      `<div class="field"><label for="${name}">${label}</label>
<input type="${type}" id="${name}" name="${name}" value="${escapeHtml(filters[name] ?? '')}"></div>`;
    html(
      ctx,
      200,
      consolePage(
        'Auditoria',
        { ...pageContext(ctx), section: 'audit' },
        `<form method="get" action="${CONSOLE_PATH}/audit" class="inline" aria-label="Filtros">
${input('actor_id', 'Operador (id)')}${input('operation_id', 'Operação')}${input('from', 'De', 'date')}${input('to', 'Até', 'date')}
<button type="submit" class="secondary">Filtrar</button></form>
${table(
  'Registro de auditoria, mais recentes primeiro',
  ['Quando', 'Quem', 'Operação', 'Pedido', 'Resultado', 'Detalhe'],
  page.rows.map((entry) => [
    `${when(entry.startedAt)}<br><span class="muted">${code(entry.id)}</span>`,
    code(entry.actorId),
    code(entry.operationId),
    `${escapeHtml(entry.method)} ${code(entry.path)}`,
    entry.status === null
      ? 'sem resultado'
      : `${entry.status}${entry.problemCode ? ` ${code(entry.problemCode)}` : ''}`,
    entry.detail ? code(JSON.stringify(entry.detail)) : '—',
  ]),
  rows ? 'Nada registrado com esses filtros.' : 'Essa página não existe mais.',
)}
${nextPage(`${CONSOLE_PATH}/audit`, { ...filters, limit: String(limit) }, page.hasMore ? page.rows.at(-1)?.id : undefined)}`,
      ),
    );
  });
}
