import { requestApproval } from '../../../commands/approvals.js';
import { clockNow } from '../../../commands/customer-clock.js';
import {
  claimDisbursement,
  refuseWhilePayoutInFlight,
  reportDisbursement,
} from '../../../commands/loan-commands.js';
import { loanNotFound } from '../../../commands/loan-deps.js';
import { findLoanForOps, type Loan } from '../../../db/queries/loans.js';
import { loansAwaitingDisbursement } from '../../../db/queries/work-queues.js';
import { pageOf } from '../../../db/pagination.js';
import type { DisbursementAccount } from '../../../domain/loans/disbursement-account.js';
import { ProblemError } from '../../../errors.js';
import type { AppContext } from '../../context.js';
import { field, html } from '../hosted/respond.js';
import { loanParams } from '../loans/schema.js';
import { bodyFor, mayRun, runAction } from './actions.js';
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

const claimNames: Record<Loan['disbursementStatus'], string> = {
  pending: 'não reivindicado',
  claimed: 'reivindicado',
  confirmed: 'confirmado',
  failed: 'falhou',
};

const accountText = (account: DisbursementAccount) =>
  account.type === 'pix'
    ? `Pix ${escapeHtml(account.pix_key_type)}: ${code(account.pix_key)}`
    : `Conta ${escapeHtml(account.bank_code)} ag. ${escapeHtml(account.branch)} c. ${escapeHtml(account.account_number)}`;

/**
 * Disbursements done by hand (contract §13, §15): production loans signed and waiting for their
 * money. Claim before sending (`claimLoanDisbursement`); confirm once it arrived, held for a second
 * operator of the desk (`reportLoanDisbursement`, as the ops API holds it); or report it failed.
 */
export function disbursementPages({ router, deps, staff }: ConsoleRoutes): void {
  const listPage = async (ctx: AppContext, outcome = '', status = 200) => {
    const operator = operatorOf(ctx);
    const context = pageContext(ctx);
    const limit = listLimit(ctx);
    const rows = await loansAwaitingDisbursement(deps.db, {
      limit,
      startingAfter: cursorOf(ctx, 'ln'),
    });
    if (!rows) return notFoundPage(ctx, 'Essa página da fila não existe mais.');
    const page = pageOf(rows, limit);
    const mayClaim = mayRun(deps, operator, 'claimLoanDisbursement');
    const mayReport = mayRun(deps, operator, 'reportLoanDisbursement');
    const actions = (loan: Loan) => {
      const base = `${CONSOLE_PATH}/disbursements/${loan.id}`;
      const out: string[] = [];
      if (mayClaim && loan.disbursementStatus === 'pending')
        out.push(
          form(
            `${base}/claim`,
            context,
            `<button type="submit" aria-label="Reivindicar ${loan.id}">Reivindicar</button>`,
            ' class="inline"',
          ),
        );
      if (mayReport) {
        out.push(
          form(
            `${base}/confirm`,
            context,
            `<button type="submit" aria-label="Confirmar desembolso de ${loan.id}">Confirmar desembolso</button>`,
            ' class="inline"',
          ),
          form(
            `${base}/fail`,
            context,
            `<label for="reason-${loan.id}">Motivo da falha</label>
<input type="text" id="reason-${loan.id}" name="reason" maxlength="500" required>
<button type="submit" class="danger" aria-label="Registrar falha de ${loan.id}">Registrar falha</button>`,
            ' class="inline"',
          ),
        );
      }
      return out.join('') || '—';
    };
    html(
      ctx,
      status,
      consolePage(
        'Desembolsos',
        { ...context, section: 'disbursements' },
        `${outcome}
<p class="muted">Empréstimos de produção assinados, aguardando o dinheiro. Reivindique antes de enviar
(o parceiro não cancela mais); confirme quando o dinheiro chegou — outro operador de desembolsos
aprova antes de valer.</p>
${table(
  'Empréstimos aguardando desembolso',
  ['Empréstimo', 'Valor', 'Destino', 'Desembolso', 'Criado', 'Ações'],
  page.rows.map((loan) => [
    `<a href="${CONSOLE_PATH}/loans/${loan.id}">${escapeHtml(loan.id)}</a><br><span class="muted">cliente ${code(loan.customerId)}</span>`,
    reais(loan.figures.requested_amount),
    accountText(loan.disbursementAccount),
    escapeHtml(claimNames[loan.disbursementStatus]),
    when(loan.createdAt),
    actions(loan),
  ]),
  'Nenhum empréstimo aguardando desembolso.',
)}
${nextPage(`${CONSOLE_PATH}/disbursements`, { limit: String(limit) }, page.hasMore ? page.rows.at(-1)?.id : undefined)}`,
      ),
    );
  };

  router.get('/disbursements', ...staff, (ctx) => listPage(ctx));

  const loanOf = async (ctx: AppContext) => {
    const params = loanParams.safeParse(ctx.params);
    const loan = params.success ? await findLoanForOps(deps.db, params.data.loan_id) : undefined;
    if (!loan) throw loanNotFound(String(ctx.params.loan_id));
    return loan;
  };

  router.post('/disbursements/:loan_id/claim', ...staff, async (ctx) => {
    const outcome = await runAction(ctx, deps, 'claimLoanDisbursement', async () => {
      const loan = await claimDisbursement(deps.loans, await loanOf(ctx));
      ctx.state.auditDetail = { loan_id: loan.id };
      return `<p>Empréstimo ${code(loan.id)} reivindicado: envie o dinheiro a ${accountText(loan.disbursementAccount)} e confirme aqui.</p>`;
    });
    await listPage(ctx, outcome.html, outcome.status);
  });

  router.post('/disbursements/:loan_id/confirm', ...staff, async (ctx) => {
    const outcome = await runAction(ctx, deps, 'reportLoanDisbursement', async () => {
      const loan = await loanOf(ctx);
      await refuseWhilePayoutInFlight(deps.loans.db, loan);
      if (loan.status !== 'processing')
        throw new ProblemError('invalid_state', `The loan is ${loan.status}, not processing.`);
      const at = clockNow(loan, deps.loans.clock()).toISOString(); // the money went out now
      if (loan.environment === 'production') {
        const approval = await requestApproval(
          deps.loans,
          operatorOf(ctx),
          'disbursement',
          { loan },
          { outcome: 'confirmed', at },
        );
        ctx.status = 202;
        ctx.state.auditDetail = { approval_id: approval.id, kind: approval.kind, loan_id: loan.id };
        return `<p>Confirmação do desembolso de ${code(loan.id)} aguardando aprovação de outro operador: ${code(approval.id)}.</p>`;
      }
      const after = await reportDisbursement(
        deps.loans,
        loan,
        { outcome: 'confirmed' },
        { actor: operatorOf(ctx).actor },
      );
      return `<p>Desembolso de ${code(after.id)} confirmado.</p>`;
    });
    await listPage(ctx, outcome.html, outcome.status);
  });

  router.post('/disbursements/:loan_id/fail', ...staff, async (ctx) => {
    const outcome = await runAction(ctx, deps, 'reportLoanDisbursement', async () => {
      const body = bodyFor<{ outcome: 'failed'; reason?: string }>(deps, 'reportLoanDisbursement', {
        outcome: 'failed',
        reason: field(ctx, 'reason'),
      });
      const loan = await loanOf(ctx);
      await refuseWhilePayoutInFlight(deps.loans.db, loan);
      ctx.state.auditDetail = { loan_id: loan.id, outcome: 'failed' };
      const after = await reportDisbursement(deps.loans, loan, body, {
        actor: operatorOf(ctx).actor,
      });
      return `<p>Desembolso de ${code(after.id)} registrado como falho; o empréstimo está ${escapeHtml(after.status)}.</p>`;
    });
    await listPage(ctx, outcome.html, outcome.status);
  });
}
