import type { Erasure } from '../../../db/queries/erasure.js';
import { recentErasures } from '../../../db/queries/work-queues.js';
import { pageOf } from '../../../db/pagination.js';
import { html } from '../hosted/respond.js';
import { mayRun } from './actions.js';
import {
  CONSOLE_PATH,
  code,
  consolePage,
  escapeHtml,
  form,
  nextPage,
  table,
  when,
  type PageContext,
} from './layout.js';
import { cursorOf, forbiddenPage, listLimit, notFoundPage } from './pages.js';
import { operatorOf, pageContext, type ConsoleRoutes } from './router.js';

/** Where an erasure stands, as `GET /ops/v1/customers/{id}/erasure` names it, in Portuguese. */
export function erasureStatusName(erasure: Erasure): string {
  if (erasure.completedAt) return 'concluído: nada pessoal restou';
  if (erasure.filesDeletedAt)
    return `retido: contratos e razão guardados até ${erasure.retainedUntil ? erasure.retainedUntil.toISOString().slice(0, 10) : '—'}`;
  return 'apagando: arquivos e workflows sendo encerrados';
}

export const erasureFacts = (erasure: Erasure) => `<dl class="facts">
<dt>Situação</dt><dd><strong>${escapeHtml(erasureStatusName(erasure))}</strong></dd>
<dt>Pedido por</dt><dd>${code(erasure.requestedBy.id)}</dd>
<dt>Apagado em</dt><dd>${when(erasure.erasedAt)}</dd>
<dt>Retido até</dt><dd>${when(erasure.retainedUntil)}</dd>
<dt>Arquivos apagados</dt><dd>${when(erasure.filesDeletedAt)}</dd>
<dt>Concluído</dt><dd>${when(erasure.completedAt)}</dd>
</dl>`;

/** The administrator's button: erasure is at once and cannot be undone, as over the API. */
export const erasureForm = (customerId: string, context: Pick<PageContext, 'csrf'>) =>
  form(
    `${CONSOLE_PATH}/customers/${customerId}/erasure`,
    context,
    `<p class="muted">Apaga agora nome, e-mail, telefone, CPF/CNPJ e documentos; contratos e razão de
empréstimos encerrados ficam pelo prazo legal (RETENTION_AFTER_LOAN_END). Não se desfaz. Um
empréstimo em vigor recusa o apagamento.</p>
<button type="submit" class="danger">Apagar dados pessoais</button>`,
  );

/**
 * Erasure requests (contract §15, LGPD art. 18), newest first: each customer's is made on its page
 * (`eraseCustomer`, administrators), and read here as `getCustomerErasure` reads it — the same
 * role.
 */
export function erasurePages({ router, deps, staff }: ConsoleRoutes): void {
  router.get('/erasures', ...staff, async (ctx) => {
    if (!mayRun(deps, operatorOf(ctx), 'getCustomerErasure'))
      return forbiddenPage(ctx, deps, 'getCustomerErasure');
    const limit = listLimit(ctx);
    const rows = await recentErasures(deps.db, { limit, startingAfter: cursorOf(ctx, 'cust') });
    if (!rows) return notFoundPage(ctx, 'Essa página da lista não existe mais.');
    const page = pageOf(rows, limit);
    html(
      ctx,
      200,
      consolePage(
        'Apagamentos (LGPD)',
        { ...pageContext(ctx), section: 'erasures' },
        `<p class="muted">Pedidos de apagamento de dados pessoais, os mais recentes primeiro. Para pedir
um, abra a página do cliente (administradores).</p>
<form method="get" action="${CONSOLE_PATH}/customers" class="inline" aria-label="Abrir cliente">
<div class="field"><label for="customer-id">Cliente (id)</label>
<input type="text" id="customer-id" name="id" required placeholder="cust_…" size="24"></div>
<button type="submit" class="secondary">Abrir</button></form>
${table(
  'Apagamentos, mais recentes primeiro',
  ['Cliente', 'Situação', 'Pedido por', 'Apagado em', 'Retido até'],
  page.rows.map((erasure) => [
    `<a href="${CONSOLE_PATH}/customers/${erasure.customerId}">${escapeHtml(erasure.customerId)}</a>`,
    escapeHtml(erasureStatusName(erasure)),
    code(erasure.requestedBy.id),
    when(erasure.erasedAt),
    when(erasure.retainedUntil),
  ]),
  'Nenhum apagamento.',
)}
${nextPage(`${CONSOLE_PATH}/erasures`, { limit: String(limit) }, page.hasMore ? page.rows.at(-1)?.customerId : undefined)}`,
      ),
    );
  });
}
