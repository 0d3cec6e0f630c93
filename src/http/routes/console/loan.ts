import { requestApproval } from '../../../commands/approvals.js';
import { checkDevolucaoRequest } from '../../../commands/devolucoes.js';
import { agreementsOfLoan } from '../../../db/queries/agreements.js';
import { devolucoesOfLoan } from '../../../db/queries/devolucoes.js';
import { listEvents } from '../../../db/queries/events.js';
import { findLoanForOps, type LoanView } from '../../../db/queries/loans.js';
import { entriesOf } from '../../../db/queries/ledger.js';
import { listLoanCharges } from '../../../db/queries/charges.js';
import { listLoanTransactions } from '../../../db/queries/loans.js';
import { presentLoanTransaction } from '../../../presenters/loans.js';
import { workflowIds } from '../../../temporal/workflow-ids.js';
import type { AppContext } from '../../context.js';
import { answerHeld } from '../approvals/schema.js';
import { field, html } from '../hosted/respond.js';
import { loanParams } from '../loans/schema.js';
import { presenter } from '../loans/shared.js';
import { bodyFor, mayRun, runAction } from './actions.js';
import { agreementTable } from './agreements.js';
import { devolucaoTable } from './devolucoes.js';
import { centavosOf } from './kyc.js';
import { CONSOLE_PATH, code, consolePage, escapeHtml, form, reais, table, when } from './layout.js';
import { notFoundPage } from './pages.js';
import { operatorOf, pageContext, temporalUiLink, type ConsoleRoutes } from './router.js';

/** How many transactions, charges and events the page shows (newest loans have a handful). */
const SHOWN = 100;

/**
 * A loan as staff read it: its figures, its schedule as it stands today, its transactions with
 * their ledger entries, its charges, and a link to its workflow in the Temporal UI (where payloads
 * show decoded to a `workflow_viewer`). The same queries and presenter the API's loan reads use.
 */
export function loanPages({ router, deps, staff }: ConsoleRoutes): void {
  const present = presenter(deps.loans);
  const loanOf = async (ctx: AppContext) => {
    const params = loanParams.safeParse(ctx.params);
    return params.success ? await findLoanForOps(deps.db, params.data.loan_id) : undefined;
  };

  const page = async (ctx: AppContext, loan: LoanView, outcome = '', status = 200) => {
    const context = pageContext(ctx);
    const tenant = { partnerId: loan.partnerId, environment: loan.environment };
    const view = present(loan);
    const list = { limit: SHOWN, sort: 'created_at' as const, order: 'asc' as const };
    const transactions = await listLoanTransactions(deps.db, tenant, loan.id, list);
    const entries = await entriesOf(
      deps.db,
      transactions.rows.map((transaction) => transaction.id),
    );
    const charges = await listLoanCharges(deps.db, tenant, loan.id, list);
    const events = await listEvents(deps.db, tenant, {
      limit: SHOWN,
      sort: 'created_at',
      order: 'desc',
      resource_id: loan.id,
    });
    const devolucoes = await devolucoesOfLoan(deps.db, tenant, loan.id);
    const agreements = agreementTable(await agreementsOfLoan(deps.db, loan.id));
    const mayRefund =
      loan.environment === 'production' &&
      view.refund_due_amount > 0 &&
      mayRun(deps, operatorOf(ctx), 'requestLoanDevolucao');
    html(
      ctx,
      status,
      consolePage(
        `Empréstimo ${loan.id}`,
        context,
        `${outcome}
<dl class="facts">
<dt>Status</dt><dd><strong>${escapeHtml(view.status)}</strong> · desembolso ${escapeHtml(view.disbursement_status)}</dd>
<dt>Cliente</dt><dd><a href="${CONSOLE_PATH}/customers/${loan.customerId}">${escapeHtml(loan.customerId)}</a></dd>
<dt>Parceiro</dt><dd>${code(loan.partnerId)} (${escapeHtml(loan.environment)})</dd>
<dt>Valor liberado</dt><dd>${reais(view.requested_amount)}</dd>
<dt>Parcelas</dt><dd>${view.installments} × ${reais(view.installment_amount)}</dd>
<dt>Liberação</dt><dd>${escapeHtml(view.release_date)}</dd>
<dt>A devolver</dt><dd>${reais(view.refund_due_amount)}</dd>
${view.written_off_at ? `<dt>Baixado como perda</dt><dd>${escapeHtml(view.written_off_at)} (o cliente ainda deve; pagamentos vão a recuperações)</dd>\n` : ''}${view.assigned_to ? `<dt>Cedido</dt><dd>a ${escapeHtml(view.assigned_to.name)} (CNPJ ${escapeHtml(view.assigned_to.cnpj)}), cessão ${escapeHtml(view.assignment_id ?? '')}: pagamentos são do cessionário</dd>\n` : ''}<dt>Workflow</dt><dd>${temporalUiLink(deps, workflowIds.loan(loan.id))}</dd>
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
)}
<h2>Devoluções</h2>
${devolucaoTable(devolucoes.slice(0, SHOWN), false, 'Nenhuma devolução.')}
${
  mayRefund
    ? form(
        `${CONSOLE_PATH}/loans/${loan.id}/devolucoes`,
        context,
        `<div class="field"><label for="devolucao-amount">Valor a devolver (R$; vazio: tudo o que pode sair por devolução)</label>
<input type="text" id="devolucao-amount" name="amount" inputmode="decimal" placeholder="${escapeHtml(reais(view.refund_due_amount).replace('R$ ', ''))}"></div>
<button type="submit">Pedir devolução</button>`,
        ' class="inline"',
      )
    : ''
}
<h2>Acordos</h2>
${agreements}
<h2>Eventos</h2>
${table(
  'Eventos do empréstimo, mais recentes primeiro',
  ['Evento', 'Tipo', 'Quando'],
  events.rows.map((event) => [code(event.id), code(event.type), when(event.createdAt)]),
  'Nenhum evento.',
)}`,
      ),
    );
  };

  router.get('/loans/:loan_id', ...staff, async (ctx) => {
    const loan = await loanOf(ctx);
    if (!loan) return notFoundPage(ctx, 'Empréstimo não encontrado.');
    await page(ctx, loan);
  });

  // A refund by devolução (`requestLoanDevolucao`): checked now, held for a second operator of
  // the payments desk, exactly as over the API.
  router.post('/loans/:loan_id/devolucoes', ...staff, async (ctx) => {
    const loan = await loanOf(ctx);
    if (!loan) return notFoundPage(ctx, 'Empréstimo não encontrado.');
    const outcome = await runAction(ctx, deps, 'requestLoanDevolucao', async () => {
      const typed = field(ctx, 'amount');
      const body = bodyFor<{ amount?: number }>(
        deps,
        'requestLoanDevolucao',
        typed ? { amount: centavosOf(typed) ?? typed } : {},
      );
      const amount = await checkDevolucaoRequest(
        { db: deps.db, pspConfigured: deps.pspConfigured },
        loan,
        body.amount,
      );
      const approval = await requestApproval(
        deps.loans,
        operatorOf(ctx),
        'devolucao',
        { loan },
        { amount },
      );
      answerHeld(ctx, approval, deps.loans.clock(), { loan_id: loan.id, amount });
      return `<p>Devolução de ${reais(amount)} do empréstimo ${code(loan.id)} aguardando aprovação de outro operador de pagamentos: ${code(approval.id)}.</p>`;
    });
    const now = (await findLoanForOps(deps.db, loan.id)) ?? loan;
    await page(ctx, now, outcome.html, outcome.status);
  });
}
