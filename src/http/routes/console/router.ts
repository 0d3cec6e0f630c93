import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ApprovalDeps } from '../../../commands/approvals.js';
import type { CustomerDeps } from '../../../commands/customer-deps.js';
import type { DecideCreditDeps } from '../../../commands/decide-credit.js';
import type { LoanDeps } from '../../../commands/loan-deps.js';
import { liveTokenIdOf, operatorOfLiveToken } from '../../../db/queries/operator-sessions.js';
import { isBreakGlass, type Operator } from '../../../domain/operators.js';
import { ProblemError } from '../../../errors.js';
import type { AppContext, AppState } from '../../context.js';
import { securityHeaders } from '../../middleware/security-headers.js';
import { field, html, parseForm } from '../hosted/respond.js';
import type { ActionDeps } from './actions.js';
import type { ApprovalRequestDeps } from '../../../commands/approvals.js';
import type { ErasureDeps } from '../../../commands/erase-customer.js';
import type { RequestReconciliationDeps } from '../../../commands/request-reconciliation.js';
import type { StaffCommandDeps } from '../../../commands/staff-changes.js';
import { approvalPages } from './approvals.js';
import { customerPages } from './customer.js';
import { devolucaoPages } from './devolucoes.js';
import { erasurePages } from './erasures.js';
import { operatorPages } from './operators.js';
import { reconciliationPages } from './reconciliation.js';
import { trialBalancePages } from './trial-balance.js';
import { auditPages } from './audit.js';
import { disbursementPages } from './disbursements.js';
import { kycPages } from './kyc.js';
import { loanPages } from './loan.js';
import { CONSOLE_PATH, consolePage, escapeHtml, form, notice, sections } from './layout.js';
import { pixPages } from './pix.js';
import { FORM_COOKIE, SESSION_COOKIE, SESSION_SECONDS, type ConsoleSessions } from './session.js';
import { consoleStylesheet } from './stylesheet.js';

/**
 * The back office (contract §18, issue 40): server-rendered Portuguese pages on the ops listener,
 * each a view over the ops API's own queries and commands (see actions.ts). Staff sign in with
 * their operator token, which goes through the ops API's bearer guard and is never kept; the
 * browser holds a session naming the token (session.ts), checked live on every request.
 */
export const CONSOLE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface ConsoleDeps extends ActionDeps {
  sessions: ConsoleSessions;
  /** The ops API's guard (`guards.ops`): the sign-in's token is checked by it and nothing else. */
  opsGuard: Middleware<AppState>[];
  customers: CustomerDeps & DecideCreditDeps;
  loans: ApprovalDeps & LoanDeps;
  /** The Temporal UI (TEMPORAL_UI_ORIGIN) and namespace: a loan's page links to its workflow. */
  temporalUi: { origin: string; namespace: string };
  /** Whether a PSP is configured (PSP_API_URL): devoluções need one. */
  pspConfigured: boolean;
  /** What `eraseCustomer` needs (the ops API's erasure deps). */
  erasure: ErasureDeps;
  /** What `runReconciliation` needs. */
  reconciliation: RequestReconciliationDeps;
  /** Where the ops API's operator routes get theirs (staff changes, approvals). */
  staff: ApprovalRequestDeps & StaffCommandDeps;
  https: boolean;
}

/** What each section's pages get: the deps, and the chain every signed-in page runs. */
export interface ConsoleRoutes {
  router: Router<AppState>;
  deps: ConsoleDeps;
  /** Headers, the form cookie and its CSRF check, the session: before every page of staff. */
  staff: Middleware<AppState>[];
}

/** The operator of a signed-in page (set by the `staff` chain). */
export const operatorOf = (ctx: { state: AppState }): Operator => {
  if (!ctx.state.operator) throw new Error('a console page ran without its session');
  return ctx.state.operator;
};

/** A link to a workflow in the Temporal UI (payloads show decoded to a `workflow_viewer`). */
export const temporalUiLink = (deps: ConsoleDeps, workflowId: string) => {
  const href = `${deps.temporalUi.origin}/namespaces/${encodeURIComponent(deps.temporalUi.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return `<a href="${escapeHtml(href)}">${escapeHtml(workflowId)} no Temporal UI</a>`;
};

/** The page context of a request: its operator and its forms' CSRF token. */
export const pageContext = (ctx: { state: AppState }) => ({
  operator: ctx.state.operator,
  csrf: ctx.state.csrf ?? '',
});

const runGuards = (guards: Middleware<AppState>[], ctx: AppContext, next: () => Promise<void>) =>
  guards.reduceRight<() => Promise<unknown>>(
    (following, guard) => () => guard(ctx, following) as Promise<unknown>,
    next,
  )();

/** The ops API's operations the console runs or reads by: each must exist (checked at start). */
const OPERATIONS = [
  'reviewCustomer',
  'decideCustomerCredit',
  'approveApproval',
  'rejectApproval',
  'claimLoanDisbursement',
  'reportLoanDisbursement',
  'matchUnmatchedPix',
  'returnUnmatchedPix',
  'listAudit',
  'requestLoanDevolucao',
  'listDevolucoes',
  'getReconciliation',
  'runReconciliation',
  'getTrialBalance',
  'listOperators',
  'createOperator',
  'updateOperatorRoles',
  'rotateOperatorToken',
  'reactivateOperator',
  'deactivateOperator',
  'eraseCustomer',
  'getCustomerErasure',
];

export function consoleRoutes(deps: ConsoleDeps): Router<AppState> {
  for (const operationId of OPERATIONS) deps.operation(operationId);
  const router = new Router<AppState>({ prefix: CONSOLE_PATH });
  const { sessions } = deps;
  const cookie = (name: string, value: string, maxAge?: number) =>
    [
      `${name}=${value}`,
      `Path=${CONSOLE_PATH}`,
      ...(maxAge === undefined ? [] : [`Max-Age=${maxAge}`]),
      'HttpOnly',
      'SameSite=Strict',
      ...(deps.https ? ['Secure'] : []),
    ].join('; ');

  const headers: Middleware<AppState> = async (ctx, next) => {
    ctx.set({
      ...securityHeaders(deps.https),
      'Content-Security-Policy': CONSOLE_CSP,
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
    });
    await next();
  };

  /** Every browser gets a form cookie; every POST must carry its CSRF token (else 403, nothing done). */
  const forms: Middleware<AppState> = async (ctx, next) => {
    const sent = sessions.formCookieOf(ctx.cookies.get(FORM_COOKIE));
    if (ctx.method === 'POST') {
      await parseForm(ctx, async () => {});
      if (!sessions.csrfValid(sent, field(ctx, 'csrf'))) {
        ctx.state.log.info('console form refused: no valid CSRF token');
        return html(
          ctx,
          403,
          consolePage(
            'Formulário expirado',
            { csrf: '' },
            `<p>Por segurança, abra a página de novo e repita o que estava fazendo. Nada foi registrado.</p>
<p><a href="${CONSOLE_PATH}">Voltar ao console</a></p>`,
          ),
        );
      }
    }
    const value = sent ?? sessions.newFormCookie();
    if (!sent) ctx.append('Set-Cookie', cookie(FORM_COOKIE, value));
    ctx.state.csrf = sessions.csrfOf(value);
    await next();
  };

  /** The session's operator while its token is live and its operator active; else sign in again. */
  const signedIn: Middleware<AppState> = async (ctx, next) => {
    const session = sessions.verify(ctx.cookies.get(SESSION_COOKIE));
    const operator = session && (await operatorOfLiveToken(deps.db, session));
    if (!operator) {
      if (ctx.cookies.get(SESSION_COOKIE)) ctx.append('Set-Cookie', cookie(SESSION_COOKIE, '', 0));
      if (ctx.method === 'GET') {
        ctx.status = 303;
        ctx.redirect(`${CONSOLE_PATH}/sign-in`);
        return;
      }
      return html(
        ctx,
        401,
        signInPage(
          ctx.state.csrf ?? '',
          'Sua sessão terminou. Entre de novo; nada foi registrado.',
        ),
      );
    }
    ctx.state.operator = operator;
    await next();
  };

  const open = [headers, forms];
  const staff = [...open, signedIn];

  router.get('/console.css', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = consoleStylesheet;
  });

  router.get('/sign-in', ...open, (ctx) => html(ctx, 200, signInPage(ctx.state.csrf ?? '')));

  router.post('/sign-in', ...open, async (ctx) => {
    const token = field(ctx, 'token');
    const refuse = (status: number, message: string) =>
      html(ctx, status, signInPage(ctx.state.csrf ?? '', message));
    // The token goes through the ops API's guard as if it came as a bearer token, and no further.
    ctx.request.headers.authorization = `Bearer ${token}`;
    try {
      await runGuards(deps.opsGuard, ctx, async () => {});
    } catch (error) {
      if (error instanceof ProblemError && error.status === 401)
        return refuse(401, 'Token não aceito.');
      throw error;
    } finally {
      delete ctx.request.headers.authorization;
    }
    const operator = ctx.state.operator;
    if (!operator) throw new Error('the ops guard passed without an operator');
    // The break-glass token is for the API in an emergency: the console is for named staff.
    if (isBreakGlass(operator))
      return refuse(
        403,
        'O token de emergência (OPS_TOKEN) não entra no console: use o seu token de operador.',
      );
    const tokenId = await liveTokenIdOf(deps.db, token);
    if (!tokenId) throw new Error('the ops guard passed a token that is not live');
    const { value } = sessions.issue(operator.actor.id, tokenId);
    ctx.append('Set-Cookie', cookie(SESSION_COOKIE, value, SESSION_SECONDS));
    ctx.state.log.info({ operator: operator.actor.id }, 'signed in to the console');
    ctx.status = 303;
    ctx.redirect(CONSOLE_PATH);
  });

  router.post('/sign-out', ...open, (ctx) => {
    ctx.append('Set-Cookie', cookie(SESSION_COOKIE, '', 0));
    html(ctx, 200, signInPage(ctx.state.csrf ?? '', 'Você saiu do console.'));
  });

  router.get('/', ...staff, (ctx) => {
    const context = pageContext(ctx);
    html(
      ctx,
      200,
      consolePage(
        'Back office',
        context,
        `<p>O trabalho de cada dia, com os mesmos comandos da API de operações: papéis, controle duplo e
auditoria valem igual aqui.</p>
<ul class="cards">${Object.values(sections)
          .map(([name, href]) => `<li class="card"><a href="${href}">${escapeHtml(name)}</a></li>`)
          .join('')}</ul>`,
      ),
    );
  });

  const routes: ConsoleRoutes = { router, deps, staff };
  kycPages(routes);
  approvalPages(routes);
  disbursementPages(routes);
  pixPages(routes);
  loanPages(routes);
  customerPages(routes);
  devolucaoPages(routes);
  reconciliationPages(routes);
  trialBalancePages(routes);
  operatorPages(routes);
  erasurePages(routes);
  auditPages(routes);
  return router;
}

function signInPage(csrf: string, message?: string): string {
  return consolePage(
    'Entrar no back office',
    { csrf },
    `<div class="signin">
${message ? notice('info', `<p>${escapeHtml(message)}</p>`) : ''}
<p>Entre com o seu token de operador (<code>opk_…</code>). O token não fica guardado: o navegador
recebe uma sessão que termina quando o token é trocado ou revogado, ou o operador desativado.</p>
${form(
  `${CONSOLE_PATH}/sign-in`,
  { csrf },
  `<div class="field"><label for="token">Token de operador</label>
<input type="password" id="token" name="token" autocomplete="off" required></div>
<button type="submit">Entrar</button>`,
)}</div>`,
  );
}
