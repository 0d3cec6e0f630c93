import { findLoanForOps } from '../../../db/queries/loans.js';
import { entriesOf } from '../../../db/queries/ledger.js';
import { listLoanCharges } from '../../../db/queries/charges.js';
import { listLoanTransactions } from '../../../db/queries/loans.js';
import { presentLoanTransaction } from '../../../presenters/loans.js';
import { workflowIds } from '../../../temporal/workflow-ids.js';
import { html } from '../hosted/respond.js';
import { loanParams } from '../loans/schema.js';
import { presenter } from '../loans/shared.js';
import { CONSOLE_PATH, code, consolePage, escapeHtml, reais, table, when } from './layout.js';
import { notFoundPage } from './pages.js';
import { pageContext, type ConsoleRoutes } from './router.js';

/** How many transactions and charges the page shows (newest loans have a handful). */
const SHOWN = 100;

/**
 * A loan as staff read it: its figures, its schedule as it stands today, its transactions with
 * their ledger entries, its charges, and a link to its workflow in the Temporal UI (where payloads
 * show decoded to a `workflow_viewer`). The same queries and presenter the API's loan reads use.
 */
export function loanPages({ router, deps, staff }: ConsoleRoutes): void {
  const present = presenter(deps.loans);
  router.get('/loans/:loan_id', ...staff, async (ctx) => {
    const params = loanParams.safeParse(ctx.params);
    const loan = params.success ? await findLoanForOps(deps.db, params.data.loan_id) : undefined;
    if (!loan) return notFoundPage(ctx, 'Empréstimo não encontrado.');
    const tenant = { partnerId: loan.partnerId, environment: loan.environment };
    const view = present(loan);
    const list = { limit: SHOWN, sort: 'created_at' as const, order: 'asc' as const };
    const transactions = await listLoanTransactions(deps.db, tenant, loan.id, list);
    const entries = await entriesOf(
      deps.db,
      transactions.rows.map((transaction) => transaction.id),
    );
    const charges = await listLoanCharges(deps.db, tenant, loan.id, list);
    const workflow = `${deps.temporalUi.origin}/namespaces/${encodeURIComponent(deps.temporalUi.namespace)}/workflows/${encodeURIComponent(workflowIds.loan(loan.id))}`;
    html(
      ctx,
      200,
      consolePage(
        `Empréstimo ${loan.id}`,
        pageContext(ctx),
        `<dl class="facts">
<dt>Status</dt><dd><strong>${escapeHtml(view.status)}</strong> · desembolso ${escapeHtml(view.disbursement_status)}</dd>
<dt>Cliente</dt><dd><a href="${CONSOLE_PATH}/kyc/${loan.customerId}">${escapeHtml(loan.customerId)}</a></dd>
<dt>Parceiro</dt><dd>${code(loan.partnerId)} (${escapeHtml(loan.environment)})</dd>
<dt>Valor liberado</dt><dd>${reais(view.requested_amount)}</dd>
<dt>Parcelas</dt><dd>${view.installments} × ${reais(view.installment_amount)}</dd>
<dt>Liberação</dt><dd>${escapeHtml(view.release_date)}</dd>
${view.written_off_at ? `<dt>Baixado como perda</dt><dd>${escapeHtml(view.written_off_at)} (o cliente ainda deve; pagamentos vão a recuperações)</dd>\n` : ''}<dt>Workflow</dt><dd><a href="${escapeHtml(workflow)}">${escapeHtml(workflowIds.loan(loan.id))} no Temporal UI</a></dd>
</dl>
<h2>Cronograma</h2>
${table(
  'Parcelas, como estão hoje',
  ['Nº', 'Vencimento', 'Parcela', 'Devido hoje', 'Status'],
  view.schedule.map((row) => [
    String(row.number),
    escapeHtml(row.due_date),
    reais(row.installment_amount),
    reais(row.amount_due),
    escapeHtml(row.status),
  ]),
  'Sem parcelas.',
)}
<h2>Transações</h2>
${table(
  'Transações e lançamentos',
  ['Transação', 'Tipo', 'Valor', 'Lançamentos', 'Quando'],
  transactions.rows.map((row) => {
    const shown = presentLoanTransaction(row, entries.get(row.id) ?? []);
    return [
      code(shown.id),
      escapeHtml(shown.type),
      reais(shown.amount),
      shown.entries
        .map(
          (entry) =>
            `${escapeHtml(entry.direction === 'debit' ? 'D' : 'C')} ${code(entry.account)} ${reais(entry.amount)}`,
        )
        .join('<br>'),
      when(row.createdAt),
    ];
  }),
  'Nenhuma transação ainda.',
)}
<h2>Cobranças</h2>
${table(
  'Cobranças Pix',
  ['Cobrança', 'Escopo', 'Valor', 'Status', 'Expira'],
  charges.rows.map((charge) => [
    code(charge.id),
    escapeHtml(charge.scope),
    reais(charge.amount),
    escapeHtml(charge.status),
    when(charge.expiresAt),
  ]),
  'Nenhuma cobrança.',
)}`,
      ),
    );
  });
}
