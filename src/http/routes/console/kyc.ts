import { reviewCustomer } from '../../../commands/change-customer.js';
import { decideCredit } from '../../../commands/decide-credit.js';
import { findCustomerForOps, type Customer } from '../../../db/queries/customers.js';
import type { Document } from '../../../db/queries/documents.js';
import {
  customersAwaitingReview,
  documentsOfCustomer,
  findDocumentForOps,
} from '../../../db/queries/work-queues.js';
import { pageOf } from '../../../db/pagination.js';
import type { ReviewItem } from '../../../domain/customers/kyc.js';
import type { CreditDecision } from '../../../commands/decide-credit.js';
import type { AppContext } from '../../context.js';
import { sendFile } from '../../send-file.js';
import { customerParams, documentParams } from '../customers/schema.js';
import { field, html } from '../hosted/respond.js';
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
import { forbiddenPage, listLimit, notFoundPage, cursorOf } from './pages.js';
import { operatorOf, pageContext, type ConsoleRoutes } from './router.js';

const statusNames: Record<string, string> = {
  pending_kyc: 'KYC pendente',
  under_review: 'em análise',
  active: 'ativo',
  denied: 'negado',
  pending: 'pendente',
  submitted: 'enviado',
  approved: 'aprovado',
  rejected: 'rejeitado',
  pending_resubmission: 'reenvio pedido',
  pending_correction: 'correção pedida',
  manual_review_required: 'aguarda decisão',
};
export const statusName = (status: string) => escapeHtml(statusNames[status] ?? status);

const itemNames: Record<string, string> = {
  identity_card_front: 'Documento de identidade (frente)',
  identity_card_back: 'Documento de identidade (verso)',
  cnh: 'CNH',
  selfie: 'Selfie',
  biometrics: 'Captura biométrica',
  ccmei: 'Certificado MEI (CCMEI)',
  email: 'E-mail',
  phone: 'Telefone',
  name: 'Nome',
  trading_name: 'Nome fantasia',
};
export const itemName = (type: string) => itemNames[type] ?? type;

/** The credit decision in a line: its status, the limit approved, the reason given. */
export const creditText = (analysis: Customer['creditAnalysis']) =>
  analysis
    ? `${statusName(analysis.status)}${analysis.approved_limit_amount !== null ? ` · limite ${reais(analysis.approved_limit_amount)}` : ''}${analysis.reason ? ` · ${escapeHtml(analysis.reason)}` : ''}`
    : 'ainda não analisado';

/** `1.234,56` or `1234,56` or `1234` reais as centavos; undefined when it is not an amount. */
export function centavosOf(text: string): number | undefined {
  const match = /^(\d{1,3}(?:\.\d{3})+|\d{1,9})(?:,(\d{2}))?$/.exec(text.replace(/^R\$\s*/, ''));
  if (!match) return undefined;
  return Number(match[1]!.replaceAll('.', '')) * 100 + Number(match[2] ?? '0');
}

/**
 * The KYC queue (production customers whose items or credit wait for a reviewer), a customer's
 * review with each document shown inline from the object store, the item decisions
 * (`reviewCustomer`) and the credit decision (`decideCustomerCredit`). Reading documents is the
 * reviewers' (the role of the review itself).
 */
export function kycPages({ router, deps, staff }: ConsoleRoutes): void {
  const db = deps.db;
  const reviewer = (ctx: AppContext) => mayRun(deps, operatorOf(ctx), 'reviewCustomer');

  router.get('/kyc', ...staff, async (ctx) => {
    if (!reviewer(ctx)) return forbiddenPage(ctx, deps, 'reviewCustomer');
    const limit = listLimit(ctx);
    const after = cursorOf(ctx, 'cust');
    const rows = await customersAwaitingReview(db, { limit, startingAfter: after });
    if (!rows) return notFoundPage(ctx, 'Essa página da fila não existe mais; volte ao início.');
    const page = pageOf(rows, limit);
    html(
      ctx,
      200,
      consolePage(
        'Fila de KYC',
        { ...pageContext(ctx), section: 'kyc' },
        `<p class="muted">Clientes de produção com itens enviados à análise, ou com crédito aguardando
decisão — os mais antigos primeiro.</p>
${table(
  'Clientes aguardando análise',
  ['Cliente', 'Nome', 'Status', 'Itens enviados', 'Crédito', 'Atualizado'],
  page.rows.map((customer) => [
    `<a href="${CONSOLE_PATH}/kyc/${customer.id}">${escapeHtml(customer.id)}</a>`,
    escapeHtml(customer.name),
    statusName(customer.status),
    String(customer.kyc.filter((item) => item.status === 'submitted').length),
    customer.creditAnalysis ? statusName(customer.creditAnalysis.status) : '—',
    when(customer.updatedAt),
  ]),
  'Nenhum cliente aguardando análise.',
)}
${nextPage(`${CONSOLE_PATH}/kyc`, { limit: String(limit) }, page.hasMore ? page.rows.at(-1)?.id : undefined)}`,
      ),
    );
  });

  const reviewPage = async (ctx: AppContext, customer: Customer, outcome = '', status = 200) => {
    const context = pageContext(ctx);
    const operator = operatorOf(ctx);
    const documents = await documentsOfCustomer(db, customer.id);
    const mayReview = mayRun(deps, operator, 'reviewCustomer');
    const mayDecide = mayRun(deps, operator, 'decideCustomerCredit');
    const itemCards = customer.kyc.map((item) => {
      const shown = documents.filter((doc) => doc.type === item.type).slice(0, 1);
      const decide =
        mayReview && item.status === 'submitted'
          ? form(
              `${CONSOLE_PATH}/kyc/${customer.id}/review`,
              context,
              `<input type="hidden" name="type" value="${escapeHtml(item.type)}">
<div class="field"><label for="message-${escapeHtml(item.type)}">Mensagem ao cliente (opcional)</label>
<textarea id="message-${escapeHtml(item.type)}" name="message" maxlength="1000"></textarea></div>
<button type="submit" name="decision" value="approve">Aprovar</button>
<button type="submit" name="decision" value="reject" class="danger">Rejeitar</button>`,
            )
          : '';
      return `<section class="card" aria-labelledby="item-${escapeHtml(item.type)}">
<h3 id="item-${escapeHtml(item.type)}">${escapeHtml(itemName(item.type))}</h3>
<p>Status: <strong>${statusName(item.status)}</strong>${item.uploaded_at ? ` · enviado ${when(item.uploaded_at)}` : ''}</p>
${item.message ? `<p class="muted">Mensagem: ${escapeHtml(item.message)}</p>` : ''}
${shown.map((doc) => documentView(customer.id, doc, item.type)).join('')}
${decide}
</section>`;
    });
    const analysis = customer.creditAnalysis;
    const credit =
      analysis?.status === 'manual_review_required' && mayDecide
        ? `<div class="cards">
<section class="card" aria-labelledby="credit-approve"><h3 id="credit-approve">Aprovar crédito</h3>
${form(
  `${CONSOLE_PATH}/kyc/${customer.id}/credit-decision`,
  context,
  `<input type="hidden" name="decision" value="approve">
<div class="field"><label for="limit">Limite pré-aprovado (R$)</label>
<input type="text" id="limit" name="limit" inputmode="decimal" required placeholder="30.000,00"></div>
<div class="field"><label for="max-installments">Prazo máximo (parcelas, opcional)</label>
<input type="number" id="max-installments" name="max_installments" min="3" max="360"></div>
<button type="submit">Aprovar crédito</button>`,
)}</section>
<section class="card" aria-labelledby="credit-reject"><h3 id="credit-reject">Recusar crédito</h3>
${form(
  `${CONSOLE_PATH}/kyc/${customer.id}/credit-decision`,
  context,
  `<input type="hidden" name="decision" value="reject">
<div class="field"><label for="reason">Motivo</label>
<textarea id="reason" name="reason" required maxlength="1000"></textarea></div>
<button type="submit" class="danger">Recusar crédito</button>`,
)}</section></div>`
        : '';
    html(
      ctx,
      status,
      consolePage(
        `Cliente ${customer.name}`,
        { ...context, section: 'kyc' },
        `${outcome}
<dl class="facts">
<dt>Cliente</dt><dd>${code(customer.id)}</dd>
<dt>CPF</dt><dd>${escapeHtml(customer.cpf)}</dd>
${customer.cnpj ? `<dt>CNPJ</dt><dd>${escapeHtml(customer.cnpj)}</dd>` : ''}
<dt>E-mail</dt><dd>${escapeHtml(customer.email)}</dd>
<dt>Telefone</dt><dd>${escapeHtml(customer.phone)}</dd>
<dt>Parceiro</dt><dd>${code(customer.partnerId)} (${escapeHtml(customer.environment)})</dd>
<dt>Status</dt><dd><strong>${statusName(customer.status)}</strong>${customer.deniedReason ? ` — ${escapeHtml(customer.deniedReason)}` : ''}</dd>
<dt>Crédito</dt><dd>${creditText(analysis)}</dd>
</dl>
<h2>Itens de KYC</h2>
<div class="cards">${itemCards.join('\n')}</div>
${credit ? `<h2>Decisão de crédito</h2>${credit}` : ''}
<p><a href="${CONSOLE_PATH}/kyc">Voltar à fila</a></p>`,
      ),
    );
  };

  const customerOf = async (ctx: AppContext): Promise<Customer | undefined> => {
    const params = customerParams.safeParse(ctx.params);
    return params.success ? findCustomerForOps(db, params.data.customer_id) : undefined;
  };

  router.get('/kyc/:customer_id', ...staff, async (ctx) => {
    if (!reviewer(ctx)) return forbiddenPage(ctx, deps, 'reviewCustomer');
    const customer = await customerOf(ctx);
    if (!customer) return notFoundPage(ctx, 'Cliente não encontrado.');
    await reviewPage(ctx, customer);
  });

  // A document or selfie, streamed from the object store to be shown inline (never cached).
  router.get('/kyc/:customer_id/documents/:document_id', ...staff, async (ctx) => {
    if (!reviewer(ctx)) return forbiddenPage(ctx, deps, 'reviewCustomer');
    const params = documentParams.safeParse(ctx.params);
    const document =
      params.success &&
      (await findDocumentForOps(db, params.data.customer_id, params.data.document_id));
    if (!document) return notFoundPage(ctx, 'Documento não encontrado.');
    const file = await deps.customers.files.open(document.storageKey);
    if (!file) return notFoundPage(ctx, 'O arquivo desse documento não está mais guardado.');
    // Framed by the review page itself only; nothing it contains may load anything.
    ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'self'");
    sendFile(ctx, file, document.contentType, `inline; filename="${document.id}"`);
  });

  router.post('/kyc/:customer_id/review', ...staff, async (ctx) => {
    const customer = await customerOf(ctx);
    if (!customer) return notFoundPage(ctx, 'Cliente não encontrado.');
    const type = field(ctx, 'type');
    const decision = field(ctx, 'decision');
    const message = field(ctx, 'message');
    const outcome = await runAction(ctx, deps, 'reviewCustomer', async () => {
      const body = bodyFor<{ items: ReviewItem[] }>(deps, 'reviewCustomer', {
        items: [{ type, decision, ...(message ? { message } : {}) }],
      });
      ctx.state.auditDetail = { customer_id: customer.id, items: [{ type, decision }] };
      const tenant = { partnerId: customer.partnerId, environment: customer.environment };
      const after = await reviewCustomer(deps.customers, tenant, customer.id, body.items);
      return `<p>${escapeHtml(itemName(type))}: ${decision === 'approve' ? 'aprovado' : 'rejeitado'}. Cliente agora ${statusName(after.status)}.</p>`;
    });
    const now = (await findCustomerForOps(db, customer.id)) ?? customer;
    await reviewPage(ctx, now, outcome.html, outcome.status);
  });

  router.post('/kyc/:customer_id/credit-decision', ...staff, async (ctx) => {
    const customer = await customerOf(ctx);
    if (!customer) return notFoundPage(ctx, 'Cliente não encontrado.');
    const outcome = await runAction(ctx, deps, 'decideCustomerCredit', async () => {
      const decision = field(ctx, 'decision');
      const limit = field(ctx, 'limit');
      const maxInstallments = field(ctx, 'max_installments');
      const body = bodyFor<CreditDecision>(
        deps,
        'decideCustomerCredit',
        decision === 'approve'
          ? {
              decision,
              approved_limit_amount: centavosOf(limit) ?? limit,
              ...(maxInstallments ? { max_installments: Number(maxInstallments) } : {}),
            }
          : { decision, reason: field(ctx, 'reason') },
      );
      ctx.state.auditDetail = { customer_id: customer.id, decision: body.decision };
      const after = await decideCredit(deps.customers, customer.id, body);
      return `<p>Crédito ${body.decision === 'approve' ? 'aprovado' : 'recusado'}. Análise: ${statusName(after.creditAnalysis?.status ?? '—')}.</p>`;
    });
    const now = (await findCustomerForOps(db, customer.id)) ?? customer;
    await reviewPage(ctx, now, outcome.html, outcome.status);
  });
}

/** A document inline: an image as itself, a PDF embedded in a frame of its own. */
function documentView(customerId: string, document: Document, type: string): string {
  const src = `${CONSOLE_PATH}/kyc/${customerId}/documents/${document.id}`;
  const label = `${itemName(type)}, enviado em ${document.uploadedAt.toISOString().slice(0, 10)}`;
  const shown = document.contentType.startsWith('image/')
    ? `<img src="${src}" alt="${escapeHtml(label)}">`
    : `<iframe src="${src}" title="${escapeHtml(label)}"></iframe>`;
  return `<figure class="document">${shown}
<figcaption class="muted">${escapeHtml(document.fileName)} · ${escapeHtml(document.contentType)} ·
<a href="${src}">abrir</a></figcaption></figure>`;
}
