import { requestApproval } from '../../../commands/approvals.js';
import { checkPixMatch, checkPixReturn } from '../../../commands/unmatched-pix.js';
import { unmatchedPix, type ReceivedPix } from '../../../db/queries/charges.js';
import { findLoanForOps } from '../../../db/queries/loans.js';
import { pageOf } from '../../../db/pagination.js';
import { problems } from '../../../errors.js';
import type { AppContext } from '../../context.js';
import { field, html } from '../hosted/respond.js';
import { bodyFor, mayRun, runAction } from './actions.js';
import { CONSOLE_PATH, code, consolePage, form, nextPage, reais, table, when } from './layout.js';
import { listLimit, notFoundPage } from './pages.js';
import { operatorOf, pageContext, type ConsoleRoutes } from './router.js';

const E2E = /^[a-zA-Z0-9]{32}$/;

/**
 * Unmatched Pix (contract §14): money on the lender's account that no charge claimed, oldest
 * first (`GET /ops/v1/unmatched-pix`). Match one to the loan it was meant for
 * (`matchUnmatchedPix`) or record it sent back (`returnUnmatchedPix`): each held for a second
 * operator of the payments desk, as over the API.
 */
export function pixPages({ router, deps, staff }: ConsoleRoutes): void {
  const listPage = async (ctx: AppContext, outcome = '', status = 200) => {
    const operator = operatorOf(ctx);
    const context = pageContext(ctx);
    const limit = listLimit(ctx);
    const after =
      typeof ctx.query.starting_after === 'string' && E2E.test(ctx.query.starting_after)
        ? ctx.query.starting_after
        : undefined;
    const rows = await unmatchedPix(deps.db, limit + 1, after);
    if (!rows) return notFoundPage(ctx, 'Essa página da lista não existe mais.');
    const page = pageOf(rows, limit);
    const mayMatch = mayRun(deps, operator, 'matchUnmatchedPix');
    const mayReturn = mayRun(deps, operator, 'returnUnmatchedPix');
    const actions = (pix: ReceivedPix) => {
      const base = `${CONSOLE_PATH}/unmatched-pix/${pix.endToEndId}`;
      const out: string[] = [];
      if (mayMatch)
        out.push(
          form(
            `${base}/match`,
            context,
            `<label for="loan-${pix.endToEndId}">Empréstimo</label>
<input type="text" id="loan-${pix.endToEndId}" name="loan_id" required placeholder="ln_…" size="20">
<button type="submit" aria-label="Vincular Pix ${pix.endToEndId}">Vincular</button>`,
            ' class="inline"',
          ),
        );
      if (mayReturn)
        out.push(
          form(
            `${base}/return`,
            context,
            `<label for="reference-${pix.endToEndId}">Id da devolução</label>
<input type="text" id="reference-${pix.endToEndId}" name="reference" required maxlength="64" size="16">
<button type="submit" class="danger" aria-label="Devolver Pix ${pix.endToEndId}">Devolver</button>`,
            ' class="inline"',
          ),
        );
      return out.join('') || '—';
    };
    html(
      ctx,
      status,
      consolePage(
        'Pix não identificados',
        { ...context, section: 'pix' },
        `${outcome}
<p class="muted">Pix recebidos cujo txid não é de nenhuma cobrança de produção, os mais antigos
primeiro. Vincule ao empréstimo a que se destinava ou registre a devolução ao pagador — outro
operador de pagamentos aprova antes de valer.</p>
${table(
  'Pix não identificados',
  ['End-to-end id', 'txid', 'Valor', 'Pago em', 'Recebido em', 'Ações'],
  page.rows.map((pix) => [
    code(pix.endToEndId),
    code(pix.txid),
    reais(pix.amount),
    when(pix.paidAt),
    when(pix.receivedAt),
    actions(pix),
  ]),
  'Nenhum Pix não identificado.',
)}
${nextPage(`${CONSOLE_PATH}/unmatched-pix`, { limit: String(limit) }, page.hasMore ? page.rows.at(-1)?.endToEndId : undefined)}`,
      ),
    );
  };

  router.get('/unmatched-pix', ...staff, (ctx) => listPage(ctx));

  const pixOf = (ctx: AppContext) => {
    const id = String(ctx.params.end_to_end_id);
    if (!E2E.test(id)) throw problems.notFound('pix_not_found', `No Pix ${id}.`);
    return id;
  };

  router.post('/unmatched-pix/:end_to_end_id/match', ...staff, async (ctx) => {
    const outcome = await runAction(ctx, deps, 'matchUnmatchedPix', async () => {
      const endToEndId = pixOf(ctx);
      const body = bodyFor<{ loan_id: string }>(deps, 'matchUnmatchedPix', {
        loan_id: field(ctx, 'loan_id'),
      });
      await checkPixMatch(deps.loans, endToEndId, body.loan_id);
      const loan = await findLoanForOps(deps.db, body.loan_id);
      const approval = await requestApproval(
        deps.loans,
        operatorOf(ctx),
        'pix_match',
        { pix: endToEndId, ...(loan ? { loan } : {}) },
        { loan_id: body.loan_id },
      );
      ctx.status = 202;
      ctx.state.auditDetail = {
        approval_id: approval.id,
        kind: approval.kind,
        end_to_end_id: endToEndId,
      };
      return `<p>Vínculo do Pix ${code(endToEndId)} ao empréstimo ${code(body.loan_id)} aguardando aprovação de outro operador: ${code(approval.id)}.</p>`;
    });
    await listPage(ctx, outcome.html, outcome.status);
  });

  router.post('/unmatched-pix/:end_to_end_id/return', ...staff, async (ctx) => {
    const outcome = await runAction(ctx, deps, 'returnUnmatchedPix', async () => {
      const endToEndId = pixOf(ctx);
      const body = bodyFor<{ reference: string }>(deps, 'returnUnmatchedPix', {
        reference: field(ctx, 'reference'),
      });
      await checkPixReturn(deps.loans, endToEndId);
      const approval = await requestApproval(
        deps.loans,
        operatorOf(ctx),
        'pix_return',
        { pix: endToEndId },
        { reference: body.reference },
      );
      ctx.status = 202;
      ctx.state.auditDetail = {
        approval_id: approval.id,
        kind: approval.kind,
        end_to_end_id: endToEndId,
      };
      return `<p>Devolução do Pix ${code(endToEndId)} aguardando aprovação de outro operador: ${code(approval.id)}.</p>`;
    });
    await listPage(ctx, outcome.html, outcome.status);
  });
}
