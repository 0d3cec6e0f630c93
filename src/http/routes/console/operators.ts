import { requestStaffChange } from '../../../commands/staff.js';
import {
  deactivateOperator,
  findOperator,
  listOperators,
  rotateOperatorToken,
  type OperatorRecord,
} from '../../../db/queries/operators.js';
import { pageOf } from '../../../db/pagination.js';
import { hasRole, operatorRoles, type OperatorRole } from '../../../domain/operators.js';
import { problems } from '../../../errors.js';
import type { AppContext } from '../../context.js';
import { answerHeld } from '../approvals/schema.js';
import { field, html } from '../hosted/respond.js';
import { bodyFor, mayRun, runAction } from './actions.js';
import {
  CONSOLE_PATH,
  code,
  consolePage,
  escapeHtml,
  form,
  nextPage,
  roleName,
  table,
  when,
} from './layout.js';
import { cursorOf, forbiddenPage, listLimit, notFoundPage } from './pages.js';
import { operatorOf, pageContext, type ConsoleRoutes } from './router.js';
import { SESSION_COOKIE } from './session.js';

const OPERATOR_ID = /^op_[A-Za-z0-9]{1,64}$/;

/** The roles ticked in a form (`role_<role>` checkboxes), in the ops API's order. */
export const rolesOfForm = (ctx: AppContext): OperatorRole[] =>
  operatorRoles.filter((role) => field(ctx, `role_${role}`) === 'on');

const roleBoxes = (prefix: string, checked: readonly string[]) =>
  `<fieldset class="roles"><legend>Papéis</legend>${operatorRoles
    .map(
      (role) =>
        `<label><input type="checkbox" name="role_${role}" id="${prefix}-${role}"${checked.includes(role) ? ' checked' : ''}> ${escapeHtml(roleName(role))} (${code(role)})</label>`,
    )
    .join(' ')}</fieldset>`;

const statusOf = (operator: OperatorRecord) => (operator.deactivatedAt ? 'desativado' : 'ativo');

/**
 * Operators (contract §15, issue 37), administrators only, each through the ops API's staff
 * commands: a new operator, a change of roles, a reactivation or another's new token is asked here
 * and held for another administrator (Aprovações); deactivation is at once; your own token is
 * rotated at once (the new one shown once, and this session ends with the old one).
 */
export function operatorPages({ router, deps, staff }: ConsoleRoutes): void {
  const admin = (ctx: AppContext) => mayRun(deps, operatorOf(ctx), 'listOperators');

  const listPage = async (ctx: AppContext, outcome = '', status = 200) => {
    const context = pageContext(ctx);
    const limit = listLimit(ctx);
    const rows = await listOperators(deps.db, limit + 1, cursorOf(ctx, 'op'));
    if (!rows) return notFoundPage(ctx, 'Essa página da lista não existe mais.');
    const page = pageOf(rows, limit);
    html(
      ctx,
      status,
      consolePage(
        'Operadores',
        { ...context, section: 'operators' },
        `${outcome}
<p class="muted">Cada mudança (novo operador, papéis, reativação, token de outro) é pedida aqui e
vale quando outro administrador aprova em Aprovações. Desativar é imediato.</p>
${table(
  'Operadores, mais recentes primeiro',
  ['Operador', 'Nome', 'Papéis', 'Status', 'Criado'],
  page.rows.map((operator) => [
    `<a href="${CONSOLE_PATH}/operators/${operator.id}">${escapeHtml(operator.id)}</a>`,
    escapeHtml(operator.name),
    escapeHtml(operator.roles.map(roleName).join(', ') || '—'),
    statusOf(operator),
    when(operator.createdAt),
  ]),
  'Nenhum operador.',
)}
${nextPage(`${CONSOLE_PATH}/operators`, { limit: String(limit) }, page.hasMore ? page.rows.at(-1)?.id : undefined)}
${
  mayRun(deps, operatorOf(ctx), 'createOperator')
    ? `<h2>Pedir um novo operador</h2>
${form(
  `${CONSOLE_PATH}/operators`,
  context,
  `<div class="field"><label for="name">Nome</label><input type="text" id="name" name="name" required maxlength="200"></div>
<div class="field"><label for="email">E-mail (recebe o código de cadastro)</label><input type="email" id="email" name="email" required maxlength="254"></div>
${roleBoxes('new', [])}
<button type="submit">Pedir operador</button>`,
)}`
    : ''
}`,
      ),
    );
  };

  const detailPage = (ctx: AppContext, operator: OperatorRecord, outcome = '', status = 200) => {
    const context = pageContext(ctx);
    const me = operatorOf(ctx);
    const self = me.actor.id === operator.id;
    const base = `${CONSOLE_PATH}/operators/${operator.id}`;
    const actions: string[] = [];
    if (!operator.deactivatedAt) {
      if (!self && mayRun(deps, me, 'updateOperatorRoles'))
        actions.push(
          `<h2>Papéis</h2>${form(
            `${base}/roles`,
            context,
            `${roleBoxes('edit', operator.roles)}<button type="submit">Pedir mudança de papéis</button>`,
          )}`,
        );
      if (self || hasRole(me, ['admin']))
        actions.push(
          `<h2>Token</h2>${form(
            `${base}/token`,
            context,
            `<p class="muted">${
              self
                ? 'Um novo token para você, agora: os outros são revogados e esta sessão termina.'
                : 'Revoga os tokens do operador; aprovado por outro administrador, ele recebe um código por e-mail.'
            }</p><button type="submit">${self ? 'Trocar meu token' : 'Pedir novo token'}</button>`,
          )}`,
        );
      if (!self && mayRun(deps, me, 'deactivateOperator'))
        actions.push(
          `<h2>Desativar</h2>${form(
            `${base}/deactivation`,
            context,
            `<p class="muted">Imediato: os tokens dele deixam de valer; o nome continua em tudo o que fez.</p>
<button type="submit" class="danger">Desativar operador</button>`,
          )}`,
        );
    } else if (mayRun(deps, me, 'reactivateOperator'))
      actions.push(
        `<h2>Reativar</h2>${form(
          `${base}/reactivation`,
          context,
          `<button type="submit">Pedir reativação</button>`,
        )}`,
      );
    html(
      ctx,
      status,
      consolePage(
        `Operador ${operator.name}`,
        { ...context, section: 'operators' },
        `${outcome}
<dl class="facts">
<dt>Operador</dt><dd>${code(operator.id)}${self ? ' (você)' : ''}</dd>
<dt>E-mail</dt><dd>${escapeHtml(operator.email)}</dd>
<dt>Papéis</dt><dd>${escapeHtml(operator.roles.map(roleName).join(', ') || '—')}</dd>
<dt>Status</dt><dd><strong>${statusOf(operator)}</strong>${operator.deactivatedAt ? ` em ${when(operator.deactivatedAt)}` : ''}</dd>
<dt>Criado por</dt><dd>${code(operator.createdBy)} em ${when(operator.createdAt)}</dd>
</dl>
${actions.join('\n')}
<p><a href="${CONSOLE_PATH}/operators">Voltar aos operadores</a></p>`,
      ),
    );
  };

  const operatorOfPath = async (ctx: AppContext) => {
    const id = String(ctx.params.operator_id);
    return OPERATOR_ID.test(id) ? findOperator(deps.db, id) : undefined;
  };

  router.get('/operators', ...staff, async (ctx) => {
    if (!admin(ctx)) return forbiddenPage(ctx, deps, 'listOperators');
    await listPage(ctx);
  });

  // Administrators see everyone's page; every operator sees their own (to rotate their token).
  router.get('/operators/:operator_id', ...staff, async (ctx) => {
    if (!admin(ctx) && ctx.params.operator_id !== operatorOf(ctx).actor.id)
      return forbiddenPage(ctx, deps, 'listOperators');
    const operator = await operatorOfPath(ctx);
    if (!operator) return notFoundPage(ctx, 'Operador não encontrado.');
    detailPage(ctx, operator);
  });

  router.post('/operators', ...staff, async (ctx) => {
    const outcome = await runAction(ctx, deps, 'createOperator', async () => {
      const body = bodyFor<{ name: string; email: string; roles: OperatorRole[] }>(
        deps,
        'createOperator',
        { name: field(ctx, 'name'), email: field(ctx, 'email'), roles: rolesOfForm(ctx) },
      );
      const approval = await requestStaffChange(deps.staff, operatorOf(ctx), {
        kind: 'operator_creation',
        name: body.name,
        email: body.email.toLowerCase(),
        roles: body.roles,
      });
      answerHeld(ctx, approval, deps.staff.clock(), { operator_id: approval.operatorId });
      return `<p>Novo operador ${escapeHtml(body.name)} aguardando aprovação de outro administrador: ${code(approval.id)}.</p>`;
    });
    if (outcome.status === 403 && !admin(ctx)) return forbiddenPage(ctx, deps, 'createOperator');
    await listPage(ctx, outcome.html, outcome.status);
  });

  /** An action on one operator: its outcome shown on that operator's page. */
  const onOperator = (
    path: string,
    operationId: string,
    command: (ctx: AppContext, operator: OperatorRecord) => Promise<string>,
  ) =>
    router.post(`/operators/:operator_id/${path}`, ...staff, async (ctx) => {
      const operator = await operatorOfPath(ctx);
      if (!operator) return notFoundPage(ctx, 'Operador não encontrado.');
      const outcome = await runAction(ctx, deps, operationId, () => command(ctx, operator));
      if (outcome.status === 403 && !admin(ctx)) return forbiddenPage(ctx, deps, operationId);
      detailPage(
        ctx,
        (await findOperator(deps.db, operator.id)) ?? operator,
        outcome.html,
        outcome.status,
      );
    });

  const held = async (
    ctx: AppContext,
    change: Parameters<typeof requestStaffChange>[2],
    text: string,
  ) => {
    const approval = await requestStaffChange(deps.staff, operatorOf(ctx), change);
    answerHeld(ctx, approval, deps.staff.clock(), { operator_id: approval.operatorId });
    return `<p>${text} aguardando aprovação de outro administrador: ${code(approval.id)}.</p>`;
  };

  onOperator('roles', 'updateOperatorRoles', async (ctx, operator) => {
    const body = bodyFor<{ roles: OperatorRole[] }>(deps, 'updateOperatorRoles', {
      roles: rolesOfForm(ctx),
    });
    return held(
      ctx,
      { kind: 'role_change', operatorId: operator.id, roles: body.roles },
      `Papéis de ${code(operator.id)} → ${escapeHtml(body.roles.map(roleName).join(', '))}:`,
    );
  });

  onOperator('reactivation', 'reactivateOperator', (ctx, operator) =>
    held(
      ctx,
      { kind: 'operator_reactivation', operatorId: operator.id },
      `Reativação de ${code(operator.id)}`,
    ),
  );

  onOperator('deactivation', 'deactivateOperator', async (ctx, operator) => {
    const after = await deactivateOperator(deps.db, operator.id);
    if (!after)
      throw problems.notFound(
        'operator_not_found',
        `No operator ${operator.id}, or it is deactivated.`,
      );
    ctx.state.auditDetail = { operator_id: after.id };
    return `<p>Operador ${code(after.id)} desativado: os tokens dele não valem mais.</p>`;
  });

  onOperator('token', 'rotateOperatorToken', async (ctx, operator) => {
    const me = operatorOf(ctx);
    if (operator.id !== me.actor.id) {
      if (!hasRole(me, ['admin'])) throw problems.roleRequired(['admin']);
      return held(
        ctx,
        { kind: 'token_rotation', operatorId: operator.id },
        `Novo token de ${code(operator.id)}`,
      );
    }
    const token = await rotateOperatorToken(deps.db, me.actor.id);
    if (!token)
      throw problems.notFound(
        'operator_not_found',
        `No operator ${me.actor.id}, or it is deactivated.`,
      );
    ctx.state.auditDetail = { operator_id: me.actor.id };
    // The session named the token just revoked: it ends now, and says so.
    ctx.append(
      'Set-Cookie',
      `${SESSION_COOKIE}=; Path=${CONSOLE_PATH}; Max-Age=0; HttpOnly; SameSite=Strict`,
    );
    return `<p>Seu novo token (aparece só agora; guarde-o): <code class="token">${escapeHtml(token)}</code></p>
<p>Os outros foram revogados e esta sessão terminou: <a href="${CONSOLE_PATH}/sign-in">entre de novo</a> com o novo token.</p>`;
  });
}
