import { requestReconciliation } from '../../../commands/request-reconciliation.js';
import { findReconciliationReport } from '../../../db/queries/reconciliation.js';
import { recentReconciliations } from '../../../db/queries/work-queues.js';
import { addDays, businessDate } from '../../../domain/business-date.js';
import type {
  DiscrepancyKind,
  ReconciliationStatus,
} from '../../../domain/reconciliation/report.js';
import { presentReconciliation } from '../../../presenters/reconciliation.js';
import type { AppContext } from '../../context.js';
import { html } from '../hosted/respond.js';
import { reconciliationDate } from '../reconciliation/router.js';
import { mayRun, runAction } from './actions.js';
import { CONSOLE_PATH, code, consolePage, escapeHtml, form, reais, table, when } from './layout.js';
import { operatorOf, pageContext, temporalUiLink, type ConsoleRoutes } from './router.js';

type Report = ReturnType<typeof presentReconciliation>;

const statusNames: Record<ReconciliationStatus, string> = {
  running: 'em execução',
  matched: 'conferido, sem divergências',
  discrepancies: 'com divergências',
  failed: 'falhou',
};

export const discrepancyNames: Record<DiscrepancyKind, string> = {
  missing_notification: 'Pix sem notificação (lançado pela conciliação)',
  unknown_to_psp: 'Pix registrado que o PSP não conhece',
  amount_mismatch: 'Pix com valor diferente',
  not_booked: 'Pix guardado e ainda não lançado',
  devolucao_not_booked: 'Devolução do PSP não lançada',
  devolucao_unknown_to_psp: 'Devolução lançada que o PSP não conhece',
  devolucao_amount_mismatch: 'Devolução com valor diferente',
  payout_not_booked: 'Pagamento (payout) do PSP não lançado',
  payout_unknown_to_psp: 'Payout lançado que o PSP não conhece',
  payout_amount_mismatch: 'Payout com valor diferente',
  clearing_mismatch: 'Conta de compensação diferente do PSP',
};

const side = (figures: { count: number; amount: number } | null) =>
  figures ? `${figures.count} · ${reais(figures.amount)}` : '—';
const amount = (centavos: number | null) => (centavos === null ? '—' : reais(centavos));

/**
 * A day's report as staff read it (pure: the ops API's presented report in, HTML out): both sides
 * of each flow, the clearing accounts against the PSP, then every discrepancy grouped by kind, each
 * kind with its count (kinds with none are left out).
 */
export function reconciliationView(report: Report): string {
  const rows: [string, string, string][] = [
    ['Pix recebidos', side(report.pix.psp), side(report.pix.booked)],
    ['Devoluções', side(report.devolucoes.psp), side(report.devolucoes.booked)],
    ...(report.payouts
      ? [
          ['Payouts', side(report.payouts.psp), side(report.payouts.booked)] as [
            string,
            string,
            string,
          ],
        ]
      : []),
  ];
  const byKind = Object.entries(report.discrepancy_counts)
    .filter(([, count]) => count > 0)
    .map(([kind, count]) => {
      const found = report.discrepancies.filter((item) => item.kind === kind);
      return `<h3>${escapeHtml(discrepancyNames[kind as DiscrepancyKind] ?? kind)} (${count})</h3>
${table(
  discrepancyNames[kind as DiscrepancyKind] ?? kind,
  ['End-to-end id', 'Referência', 'No PSP', 'Lançado', 'O que a conciliação fez'],
  found.map((item) => [
    code(item.end_to_end_id),
    code(item.reference),
    amount(item.psp_amount),
    amount(item.booked_amount),
    item.action === 'booked_missing_notification' ? 'lançou o Pix' : 'nada (ver à mão)',
  ]),
  'Nenhuma.',
)}`;
    });
  const clearing = report.clearing.collections_clearing;
  return `<dl class="facts">
<dt>Status</dt><dd><strong>${escapeHtml(statusNames[report.status])}</strong>${report.failure ? ` — ${escapeHtml(report.failure)}` : ''}</dd>
<dt>Execuções</dt><dd>${report.runs}</dd>
<dt>Pedida em</dt><dd>${when(report.requested_at)}</dd>
<dt>Concluída em</dt><dd>${when(report.completed_at)}</dd>
</dl>
${table(
  'Os dois lados: quantidade e valor',
  ['Fluxo', 'PSP', 'Registrado'],
  rows.map(([name, psp, booked]) => [escapeHtml(name), psp, booked]),
  '',
)}
${table(
  'Contas de compensação no dia',
  ['Conta', 'Movimento', 'PSP'],
  [
    [
      code('collections_clearing'),
      `débitos ${amount(clearing.debits)} (Pix ${amount(clearing.pix_debits)})`,
      `recebido ${amount(clearing.psp_received)}`,
    ],
    [
      code('disbursement_clearing'),
      `créditos ${amount(report.clearing.disbursement_clearing.credits)}`,
      '—',
    ],
  ],
  '',
)}
<h2>Divergências</h2>
${byKind.length > 0 ? byKind.join('\n') : '<p class="empty">Nenhuma divergência.</p>'}
${report.has_more_discrepancies ? '<p class="muted">Há mais divergências do que as listadas: leia o relatório pela API.</p>' : ''}`;
}

/**
 * Reconciliation with the PSP (contract §16): the latest days run, a date picker, a day's report
 * (`getReconciliation`) and its rerun (`runReconciliation`, the payments desk).
 */
export function reconciliationPages({ router, deps, staff }: ConsoleRoutes): void {
  const page = async (ctx: AppContext, date: string, outcome = '', status = 200) => {
    const context = pageContext(ctx);
    const today = businessDate(deps.loans.clock());
    const recent = await recentReconciliations(deps.db, 14);
    const found = await findReconciliationReport(deps.db, date);
    const report = found && presentReconciliation(found.report, found.discrepancies);
    const mayRerun = mayRun(deps, operatorOf(ctx), 'runReconciliation');
    html(
      ctx,
      status,
      consolePage(
        `Conciliação de ${date}`,
        { ...context, section: 'reconciliation' },
        `${outcome}
<form method="get" action="${CONSOLE_PATH}/reconciliation" class="inline" aria-label="Escolher dia">
<div class="field"><label for="date">Dia (São Paulo)</label>
<input type="date" id="date" name="date" value="${escapeHtml(date)}" max="${today}" required></div>
<button type="submit" class="secondary">Ver</button></form>
<nav aria-label="Dias recentes"><p>Dias recentes: ${
          recent.length > 0
            ? recent
                .map(
                  (day) =>
                    `<a href="${CONSOLE_PATH}/reconciliation?date=${day.date}"${day.date === date ? ' aria-current="page"' : ''}>${day.date}</a> (${escapeHtml(statusNames[day.status])})`,
                )
                .join(' · ')
            : 'nenhum executado ainda.'
        }</p></nav>
${report ? reconciliationView(report) : '<p class="empty">A conciliação deste dia nunca rodou.</p>'}
${
  mayRerun
    ? form(
        `${CONSOLE_PATH}/reconciliation/${date}/run`,
        context,
        `<button type="submit">${report ? 'Rodar de novo' : 'Rodar agora'}</button>
<span class="muted">Uma nova execução substitui o relatório e não lança nada duas vezes.</span>`,
      )
    : ''
}`,
      ),
    );
  };

  router.get('/reconciliation', ...staff, async (ctx) => {
    const today = businessDate(deps.loans.clock());
    let date = addDays(today, -1); // the schedule reconciles the day before
    if (typeof ctx.query.date === 'string' && ctx.query.date !== '') {
      try {
        date = reconciliationDate(ctx.query.date, today);
      } catch {
        return page(
          ctx,
          date,
          `<div class="notice error" role="alert"><p>Escolha uma data de 2020-11-03 até hoje (${today}).</p></div>`,
          422,
        );
      }
    }
    await page(ctx, date);
  });

  router.post('/reconciliation/:date/run', ...staff, async (ctx) => {
    const today = businessDate(deps.loans.clock());
    let date = addDays(today, -1);
    const outcome = await runAction(ctx, deps, 'runReconciliation', async () => {
      date = reconciliationDate(String(ctx.params.date), today);
      const { report, workflowId } = await requestReconciliation(deps.reconciliation, date);
      ctx.status = 202;
      ctx.state.auditDetail = { date, run: report.runs };
      return `<p>Conciliação de ${escapeHtml(date)} na fila (execução ${report.runs}): ${temporalUiLink(deps, workflowId)}. Recarregue a página para ver o relatório quando terminar.</p>`;
    });
    await page(ctx, date, outcome.html, outcome.status);
  });
}
