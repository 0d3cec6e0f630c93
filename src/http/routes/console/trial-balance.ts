import { z } from 'zod';
import { trialBalance, type AccountBalance } from '../../../db/queries/ledger.js';
import { businessDate } from '../../../domain/business-date.js';
import type { LedgerAccount } from '../../../domain/ledger/postings.js';
import { html } from '../hosted/respond.js';
import { CONSOLE_PATH, code, consolePage, escapeHtml, reais, table } from './layout.js';
import { pageContext, type ConsoleRoutes } from './router.js';

const accountNames: Record<LedgerAccount, string> = {
  loan_principal: 'Principal a receber',
  disbursement_clearing: 'Compensação de desembolsos',
  collections_clearing: 'Compensação de recebimentos',
  iof_payable: 'IOF a recolher',
  interest_income: 'Receita de juros',
  late_fee_income: 'Receita de multa',
  late_interest_income: 'Receita de juros de mora',
  refunds_payable: 'Devoluções a pagar',
  unidentified_receipts: 'Recebimentos não identificados',
  credit_losses: 'Perdas de crédito (baixas)',
  recoveries: 'Recuperações de créditos baixados',
  refinancing_clearing: 'Compensação de refinanciamentos',
  agreement_discounts: 'Descontos concedidos em acordos',
  assignment_receivable: 'Cessões a receber',
  assignment_result: 'Resultado de cessões',
  payable_to_assignee: 'Repasses a cessionários',
};

/**
 * One environment's trial balance as staff read it (pure): each account's debits, credits and
 * balance, and the totals, which must agree — shown as a warning when they do not.
 */
export function trialBalanceView(caption: string, accounts: readonly AccountBalance[]): string {
  const debits = accounts.reduce((sum, row) => sum + row.debits, 0);
  const credits = accounts.reduce((sum, row) => sum + row.credits, 0);
  const rows = accounts.map((row) => [
    `${escapeHtml(accountNames[row.account] ?? row.account)}<br>${code(row.account)}`,
    reais(row.debits),
    reais(row.credits),
    reais(row.balance),
  ]);
  if (rows.length > 0)
    rows.push(['<strong>Total</strong>', reais(debits), reais(credits), reais(debits - credits)]);
  return `${table(caption, ['Conta', 'Débitos', 'Créditos', 'Saldo (D − C)'], rows, 'Nenhum lançamento até este dia.')}
${debits === credits ? '' : `<div class="notice error" role="alert"><p>Débitos e créditos diferem em ${reais(debits - credits)}: veja o runbook de desequilíbrio do razão.</p></div>`}`;
}

/**
 * The trial balance (contract §13, `GET /ops/v1/ledger/trial-balance`): every account over every
 * loan, production and sandbox apart, up to the end of a day (São Paulo; default today).
 */
export function trialBalancePages({ router, deps, staff }: ConsoleRoutes): void {
  router.get('/trial-balance', ...staff, async (ctx) => {
    const today = businessDate(deps.loans.clock());
    const asked = z.iso.date().safeParse(ctx.query.date);
    const date = asked.success ? asked.data : today;
    const [production, sandbox] = await Promise.all(
      (['production', 'sandbox'] as const).map((environment) =>
        trialBalance(deps.db, environment, date),
      ),
    );
    html(
      ctx,
      200,
      consolePage(
        `Balancete de ${date}`,
        { ...pageContext(ctx), section: 'ledger' },
        `<form method="get" action="${CONSOLE_PATH}/trial-balance" class="inline" aria-label="Escolher dia">
<div class="field"><label for="date">Lançamentos até o fim do dia (São Paulo)</label>
<input type="date" id="date" name="date" value="${escapeHtml(date)}"></div>
<button type="submit" class="secondary">Ver</button></form>
${ctx.query.date !== undefined && !asked.success ? '<div class="notice error" role="alert"><p>Data inválida: mostrando hoje.</p></div>' : ''}
<h2>Produção</h2>
${trialBalanceView('Balancete de produção', production!)}
<h2>Sandbox</h2>
${trialBalanceView('Balancete do sandbox', sandbox!)}`,
      ),
    );
  });
}
