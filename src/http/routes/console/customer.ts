import { findCustomerForOps, type Customer } from '../../../db/queries/customers.js';
import { listCreditOffers } from '../../../db/queries/credit-offers.js';
import { findErasure } from '../../../db/queries/erasure.js';
import { listLoans } from '../../../db/queries/loans.js';
import { maskEmail, maskTaxId } from '../../../domain/masking.js';
import { Decimal } from '../../../domain/money.js';
import { workflowIds } from '../../../temporal/workflow-ids.js';
import type { AppContext } from '../../context.js';
import { customerParams } from '../customers/schema.js';
import { html } from '../hosted/respond.js';
import { eraseCustomer } from '../../../commands/erase-customer.js';
import { mayRun, runAction } from './actions.js';
import { erasureFacts, erasureForm, erasureStatusName } from './erasures.js';
import { creditText, itemName, statusName } from './kyc.js';
import { CONSOLE_PATH, code, consolePage, escapeHtml, reais, table, when } from './layout.js';
import { notFoundPage } from './pages.js';
import { operatorOf, pageContext, temporalUiLink, type ConsoleRoutes } from './router.js';

/** How many offers and loans the page lists, newest first (a customer has a handful). */
const SHOWN = 50;

/** A rate as staff read it: `0.024900` → `2,49 %` (decimal arithmetic, half-even). */
export const percent = (rate: string) =>
  `${new Decimal(rate).times(100).toDecimalPlaces(2).toFixed(2).replace('.', ',')} %`;

/** A phone as support reads it back to a caller: the last four digits only (`•••• 4321`). */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  return digits.length < 8 ? '••••' : `•••• ${digits.slice(-4)}`;
}

/**
 * A customer as any operator may see it: identity masked (cpf/cnpj, e-mail and phone as the
 * service masks them wherever they leave the review), KYC state and items, the credit decision,
 * offers, loans (each linked to its page), its erasure, and the link to its onboarding workflow in
 * the Temporal UI. The KYC review (kyc.ts) shows the identity in full, to reviewers only.
 */
export function customerPages({ router, deps, staff }: ConsoleRoutes): void {
  const page = async (ctx: AppContext, customer: Customer, outcome = '', status = 200) => {
    const operator = operatorOf(ctx);
    const context = pageContext(ctx);
    const tenant = { partnerId: customer.partnerId, environment: customer.environment };
    const list = { limit: SHOWN, sort: 'created_at' as const, order: 'desc' as const };
    const offers = await listCreditOffers(deps.db, tenant, { ...list, customer_id: customer.id });
    const loans = await listLoans(deps.db, tenant, { ...list, customer_id: customer.id });
    const erasure = await findErasure(deps.db, customer.id);
    const reviewer = mayRun(deps, operator, 'reviewCustomer');
    html(
      ctx,
      status,
      consolePage(
        `Cliente ${customer.id}`,
        context,
        `${outcome}
<dl class="facts">
<dt>Nome</dt><dd>${customer.erasedAt ? '<em>apagado</em>' : escapeHtml(customer.name)}</dd>
<dt>CPF</dt><dd>${escapeHtml(maskTaxId(customer.cpf))}</dd>
${customer.cnpj ? `<dt>CNPJ</dt><dd>${escapeHtml(maskTaxId(customer.cnpj))}</dd>` : ''}
<dt>E-mail</dt><dd>${escapeHtml(maskEmail(customer.email))}</dd>
<dt>Telefone</dt><dd>${escapeHtml(maskPhone(customer.phone))}</dd>
<dt>Parceiro</dt><dd>${code(customer.partnerId)} (${escapeHtml(customer.environment)})</dd>
<dt>Status</dt><dd><strong>${statusName(customer.status)}</strong>${customer.deniedReason ? ` — ${escapeHtml(customer.deniedReason)}` : ''}</dd>
<dt>Crédito</dt><dd>${creditText(customer.creditAnalysis)}</dd>
<dt>Workflow</dt><dd>${temporalUiLink(deps, workflowIds.customerOnboarding(customer.id))}</dd>
<dt>Cadastro</dt><dd>${when(customer.createdAt)}</dd>
</dl>
${reviewer && !customer.erasedAt ? `<p><a href="${CONSOLE_PATH}/kyc/${customer.id}">Abrir a análise de KYC (documentos e decisões)</a></p>` : ''}
<h2>Itens de KYC</h2>
${table(
  'Itens de KYC',
  ['Item', 'Status', 'Enviado', 'Mensagem'],
  customer.kyc.map((item) => [
    escapeHtml(itemName(item.type)),
    statusName(item.status),
    when(item.uploaded_at ?? null),
    item.message ? escapeHtml(item.message) : '—',
  ]),
  'Nenhum item de KYC.',
)}
<h2>Ofertas de crédito</h2>
${table(
  'Ofertas, mais recentes primeiro',
  ['Oferta', 'Status', 'Aprovado', 'Taxa ao mês', 'Parcelas', 'Válida até'],
  offers.rows.map((offer) => [
    code(offer.id),
    escapeHtml(offer.status),
    reais(offer.approvedAmount),
    percent(offer.monthlyInterestRate),
    `${offer.minInstallments}–${offer.maxInstallments}`,
    when(offer.validUntil),
  ]),
  'Nenhuma oferta.',
)}
<h2>Empréstimos</h2>
${table(
  'Empréstimos, mais recentes primeiro',
  ['Empréstimo', 'Status', 'Valor', 'Parcelas', 'Criado'],
  loans.rows.map((loan) => [
    `<a href="${CONSOLE_PATH}/loans/${loan.id}">${escapeHtml(loan.id)}</a>`,
    escapeHtml(loan.status),
    reais(loan.figures.requested_amount),
    `${loan.figures.installments} × ${reais(loan.figures.installment_amount)}`,
    when(loan.createdAt),
  ]),
  'Nenhum empréstimo.',
)}
<h2>Apagamento (LGPD art. 18)</h2>
${erasure ? erasureFacts(erasure) : '<p class="muted">Nenhum pedido de apagamento.</p>'}
${!erasure && mayRun(deps, operator, 'eraseCustomer') ? erasureForm(customer.id, context) : ''}`,
      ),
    );
  };

  // The erasure list's "open a customer" box: a GET form, so the id travels in the query.
  router.get('/customers', ...staff, (ctx) => {
    const params = customerParams.safeParse({ customer_id: String(ctx.query.id ?? '').trim() });
    if (!params.success) return notFoundPage(ctx, 'Cliente não encontrado.');
    ctx.status = 303;
    ctx.redirect(`${CONSOLE_PATH}/customers/${params.data.customer_id}`);
  });

  router.get('/customers/:customer_id', ...staff, async (ctx) => {
    const params = customerParams.safeParse(ctx.params);
    const customer = params.success
      ? await findCustomerForOps(deps.db, params.data.customer_id)
      : undefined;
    if (!customer) return notFoundPage(ctx, 'Cliente não encontrado.');
    await page(ctx, customer);
  });

  // Erasure (LGPD art. 18): `eraseCustomer`, administrators only, at once as over the API.
  router.post('/customers/:customer_id/erasure', ...staff, async (ctx) => {
    const params = customerParams.safeParse(ctx.params);
    const found = params.success
      ? await findCustomerForOps(deps.db, params.data.customer_id)
      : undefined;
    if (!found) return notFoundPage(ctx, 'Cliente não encontrado.');
    const outcome = await runAction(ctx, deps, 'eraseCustomer', async () => {
      const { erasure, created } = await eraseCustomer(
        deps.erasure,
        found.id,
        operatorOf(ctx).actor,
      );
      ctx.state.auditDetail = {
        customer_id: erasure.customerId,
        retained_until: erasure.retainedUntil?.toISOString() ?? null,
        created,
      };
      return `<p>${created ? 'Dados pessoais apagados' : 'O apagamento já tinha sido feito'}: ${erasureStatusName(erasure)}.</p>`;
    });
    const now = (await findCustomerForOps(deps.db, found.id)) ?? found;
    await page(ctx, now, outcome.html, outcome.status);
  });
}
