import type { Devolucao } from '../../../db/queries/devolucoes.js';
import { devolucoesWithStatus } from '../../../db/queries/devolucoes.js';
import { pageOf } from '../../../db/pagination.js';
import { devolucaoStatuses, type DevolucaoStatus } from '../../../domain/loans/devolucoes.js';
import { html } from '../hosted/respond.js';
import {
  CONSOLE_PATH,
  code,
  consolePage,
  escapeHtml,
  nextPage,
  reais,
  table,
  when,
} from './layout.js';
import { listLimit, notFoundPage } from './pages.js';
import { pageContext, type ConsoleRoutes } from './router.js';

export const devolucaoStatusNames: Record<DevolucaoStatus, string> = {
  requested: 'pedida',
  processing: 'no PSP',
  returned: 'devolvida',
  failed: 'não realizada',
};

const originNames = { automatic: 'automática', ops: 'pedida por operador' } as const;
const DEVOLUCAO_ID = /^[a-zA-Z0-9]{1,35}$/;

/** Devoluções as a table: `withLoan` adds the loan's column (the list of every loan's). */
export function devolucaoTable(rows: Devolucao[], withLoan: boolean, empty: string): string {
  return table(
    'Devoluções, mais recentes primeiro',
    [
      'Devolução',
      ...(withLoan ? ['Empréstimo'] : []),
      'Pix (end-to-end)',
      'Valor',
      'Status',
      'Origem',
      'Pedida em',
      'Concluída',
    ],
    rows.map((row) => [
      code(row.id),
      ...(withLoan
        ? [`<a href="${CONSOLE_PATH}/loans/${row.loanId}">${escapeHtml(row.loanId)}</a>`]
        : []),
      code(row.endToEndId),
      reais(row.amount),
      `${escapeHtml(devolucaoStatusNames[row.status])}${row.motivo ? `<br><span class="muted">${escapeHtml(row.motivo)}</span>` : ''}`,
      `${escapeHtml(originNames[row.origin])}${row.actor ? `<br>${code(row.actor.id)}` : ''}${row.approvedBy ? ` / ${code(row.approvedBy.id)}` : ''}`,
      when(row.requestedAt),
      when(row.settledAt),
    ]),
    empty,
  );
}

/**
 * Refunds by devolução (contract §16), every loan's in one status, newest first — by default the
 * failed ones, money still due back (`GET /ops/v1/devolucoes`). A loan's own, and the request of a
 * new one, are on the loan's page.
 */
export function devolucaoPages({ router, deps, staff }: ConsoleRoutes): void {
  router.get('/devolucoes', ...staff, async (ctx) => {
    const wanted = String(ctx.query.status ?? 'failed');
    const status = (devolucaoStatuses as readonly string[]).includes(wanted)
      ? (wanted as DevolucaoStatus)
      : 'failed';
    const limit = listLimit(ctx);
    const after =
      typeof ctx.query.starting_after === 'string' && DEVOLUCAO_ID.test(ctx.query.starting_after)
        ? ctx.query.starting_after
        : undefined;
    const rows = await devolucoesWithStatus(deps.db, status, limit + 1, after);
    if (!rows) return notFoundPage(ctx, 'Essa página da lista não existe mais.');
    const page = pageOf(rows, limit);
    html(
      ctx,
      200,
      consolePage(
        'Devoluções',
        { ...pageContext(ctx), section: 'devolucoes' },
        `<p class="muted">Dinheiro devolvido ao pagador por devolução Pix no PSP. As não realizadas
deixam o valor a devolver em aberto: peça de novo na página do empréstimo (outro operador de
pagamentos aprova).</p>
<form method="get" action="${CONSOLE_PATH}/devolucoes" class="inline">
<div class="field"><label for="status">Status</label>
<select id="status" name="status">${devolucaoStatuses
          .map(
            (value) =>
              `<option value="${value}"${value === status ? ' selected' : ''}>${devolucaoStatusNames[value]}</option>`,
          )
          .join('')}</select></div>
<button type="submit" class="secondary">Filtrar</button></form>
${devolucaoTable(page.rows, true, 'Nenhuma devolução com esse status.')}
${nextPage(`${CONSOLE_PATH}/devolucoes`, { status, limit: String(limit) }, page.hasMore ? page.rows.at(-1)?.id : undefined)}`,
      ),
    );
  });
}
