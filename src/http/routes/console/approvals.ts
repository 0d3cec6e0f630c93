import { approvalReader, approvalRoles, decideApproval } from '../../../commands/approvals.js';
import { listApprovals, type Approval, type ApprovalState } from '../../../db/queries/approvals.js';
import { pageOf } from '../../../db/pagination.js';
import { hasRole, type Operator } from '../../../domain/operators.js';
import type { AppContext } from '../../context.js';
import { field, html } from '../hosted/respond.js';
import { approvalParams } from '../approvals/schema.js';
import { bodyFor, runAction } from './actions.js';
import {
  CONSOLE_PATH,
  code,
  consolePage,
  escapeHtml,
  form,
  nextPage,
  reais,
  table,
  when,
} from './layout.js';
import { cursorOf, listLimit, notFoundPage } from './pages.js';
import { operatorOf, pageContext, type ConsoleRoutes } from './router.js';

const kindNames: Record<Approval['kind'], string> = {
  disbursement: 'Desembolso confirmado à mão',
  payment: 'Pagamento registrado à mão',
  payoff: 'Quitação registrada à mão',
  refund: 'Devolução registrada à mão',
  devolucao: 'Devolução pelo PSP (devolução Pix)',
  pix_match: 'Pix não identificado → empréstimo',
  pix_return: 'Pix não identificado devolvido',
  operator_creation: 'Novo operador',
  role_change: 'Mudança de papéis',
  operator_reactivation: 'Reativação de operador',
  token_rotation: 'Troca de token',
  assignment: 'Liquidação de cessão de empréstimos',
};
const statusNames: Record<ApprovalState, string> = {
  pending: 'aguardando',
  executing: 'executando',
  approved: 'aprovada',
  failed: 'falhou',
  rejected: 'rejeitada',
  expired: 'expirada',
};
const states = Object.keys(statusNames) as ApprovalState[];

/** What the approval is about, and its request's amount when it moves money. */
function subject(approval: Approval): string {
  const parts: string[] = [];
  if (approval.loanId)
    parts.push(
      `empréstimo <a href="${CONSOLE_PATH}/loans/${approval.loanId}">${escapeHtml(approval.loanId)}</a>`,
    );
  if (approval.endToEndId) parts.push(`Pix ${code(approval.endToEndId)}`);
  if (approval.operatorId) parts.push(`operador ${code(approval.operatorId)}`);
  const amount = approval.request.amount;
  if (typeof amount === 'number' && Number.isInteger(amount)) parts.push(reais(amount));
  return parts.join('<br>') || '—';
}

/**
 * Approvals (dual control, contract §15): the ones an operator could decide and the ones it asked
 * for (`approvalReader`, as `GET /ops/v1/approvals`), and the decision (`approveApproval`,
 * `rejectApproval`): the same command, so the maker, the break-glass token and an operator without
 * the desk's role are refused exactly as over the API.
 */
export function approvalPages({ router, deps, staff }: ConsoleRoutes): void {
  const listPage = async (ctx: AppContext, outcome = '', status = 200) => {
    const operator = operatorOf(ctx);
    const context = pageContext(ctx);
    const wanted = typeof ctx.query.status === 'string' ? ctx.query.status : 'pending';
    const filter = (states as string[]).includes(wanted) ? (wanted as ApprovalState) : undefined;
    const limit = listLimit(ctx);
    const rows = await listApprovals(deps.db, approvalReader(operator), {
      limit,
      startingAfter: cursorOf(ctx, 'apr'),
      status: filter,
    });
    if (!rows) return notFoundPage(ctx, 'Essa página da lista não existe mais.');
    const page = pageOf(rows, limit);
    const now = deps.loans.clock();
    html(
      ctx,
      status,
      consolePage(
        'Aprovações',
        { ...context, section: 'approvals' },
        `${outcome}
<p class="muted">As que você pode decidir (o dinheiro da sua mesa; a equipe, se administra) e as que
você pediu. Quem pediu não aprova a própria.</p>
<form method="get" action="${CONSOLE_PATH}/approvals" class="inline">
<div class="field"><label for="status">Status</label>
<select id="status" name="status"><option value="all"${filter ? '' : ' selected'}>todas</option>${states
          .map(
            (state) =>
              `<option value="${state}"${state === filter ? ' selected' : ''}>${statusNames[state]}</option>`,
          )
          .join('')}</select></div>
<button type="submit" class="secondary">Filtrar</button></form>
${table(
  'Aprovações',
  ['Aprovação', 'Tipo', 'Sobre', 'Pedida por', 'Pedida em', 'Status', 'Ação'],
  page.rows.map((approval) => {
    const expired = approval.status === 'pending' && approval.expiresAt <= now;
    return [
      code(approval.id),
      escapeHtml(kindNames[approval.kind]),
      subject(approval),
      approval.makerId === operator.actor.id
        ? `${code(approval.makerId)} (você)`
        : code(approval.makerId),
      when(approval.createdAt),
      `${escapeHtml(statusNames[expired ? 'expired' : approval.status])}${
        approval.checkerId ? `<br><span class="muted">por ${code(approval.checkerId)}</span>` : ''
      }`,
      approval.status === 'pending' && !expired ? actions(approval, operator, context) : '—',
    ];
  }),
  'Nenhuma aprovação aqui.',
)}
${nextPage(`${CONSOLE_PATH}/approvals`, { status: wanted, limit: String(limit) }, page.hasMore ? page.rows.at(-1)?.id : undefined)}`,
      ),
    );
  };

  router.get('/approvals', ...staff, (ctx) => listPage(ctx));

  for (const decision of ['approve', 'reject'] as const)
    router.post(`/approvals/:approval_id/${decision}`, ...staff, async (ctx) => {
      const params = approvalParams.safeParse(ctx.params);
      if (!params.success) return notFoundPage(ctx, 'Aprovação não encontrada.');
      const id = params.data.approval_id;
      const operationId = decision === 'approve' ? 'approveApproval' : 'rejectApproval';
      const outcome = await runAction(ctx, deps, operationId, async () => {
        const reason =
          decision === 'reject'
            ? bodyFor<{ reason?: string }>(deps, operationId, {
                ...(field(ctx, 'reason') ? { reason: field(ctx, 'reason') } : {}),
              }).reason
            : undefined;
        const approval = await decideApproval(deps.loans, operatorOf(ctx), id, {
          decision,
          reason: reason ?? null,
        });
        ctx.state.auditDetail = {
          approval_id: approval.id,
          loan_id: approval.loanId,
          kind: approval.kind,
          maker_id: approval.makerId,
          status: approval.status,
        };
        const failure =
          approval.status === 'failed' && typeof approval.outcome?.detail === 'string'
            ? ` O comando foi recusado: ${escapeHtml(approval.outcome.detail)}`
            : '';
        return `<p>Aprovação ${code(approval.id)} (${escapeHtml(kindNames[approval.kind])}): ${escapeHtml(statusNames[approval.status])}.${failure}</p>`;
      });
      await listPage(ctx, outcome.html, outcome.status);
    });
}

/** Approve and reject, for an operator of the desk who did not ask; else why not. */
function actions(approval: Approval, operator: Operator, context: { csrf: string }): string {
  if (approval.makerId === operator.actor.id)
    return '<span class="muted">sua: aguarda outro operador</span>';
  if (!hasRole(operator, [approvalRoles[approval.kind]])) return '—';
  return `${form(
    `${CONSOLE_PATH}/approvals/${approval.id}/approve`,
    context,
    `<button type="submit" aria-label="Aprovar ${escapeHtml(approval.id)}">Aprovar</button>`,
    ' class="inline"',
  )}${form(
    `${CONSOLE_PATH}/approvals/${approval.id}/reject`,
    context,
    `<label for="reason-${approval.id}">Motivo</label>
<input type="text" id="reason-${approval.id}" name="reason" maxlength="1000">
<button type="submit" class="danger" aria-label="Rejeitar ${escapeHtml(approval.id)}">Rejeitar</button>`,
    ' class="inline"',
  )}`;
}
