import type { Agreement } from '../../../db/queries/agreements.js';
import { code, escapeHtml, reais, table, when } from './layout.js';

/** What each agreement status means to staff (contract §17; docs/agreements.md). */
const statusNames: Record<string, string> = {
  pending_acceptance: 'aguardando aceite',
  pending_entry: 'aceito, aguardando a entrada',
  active: 'ativo',
  fulfilled: 'cumprido',
  lapsed: 'caducado',
  broken: 'quebrado',
};

/**
 * A loan's payment agreements (acordos, contract §17), newest first: what was agreed (debt,
 * discount, agreed balance, rows) and where each stands. The same query the API's list reads
 * (`agreementsOfLoan`), so staff see what the partner sees.
 */
export function agreementTable(agreements: readonly Agreement[]): string {
  return table(
    'Acordos',
    [
      'Acordo',
      'Status',
      'Parcelas cobertas',
      'Dívida',
      'Desconto',
      'Acordado',
      'Linhas',
      'Prazo',
      'Aceito',
      'Encerrado',
    ],
    agreements.map((agreement) => {
      const { figures } = agreement;
      const rows = figures.schedule;
      return [
        code(agreement.id),
        escapeHtml(statusNames[agreement.status] ?? agreement.status),
        escapeHtml(
          `${figures.scope === 'all' ? 'todas' : 'vencidas'}: ${figures.rows.map((row) => row.number).join(', ')}`,
        ),
        reais(figures.debt_amount),
        reais(figures.discount_amount),
        reais(figures.agreed_amount),
        escapeHtml(
          `${figures.installments} × ${reais(rows[0]?.installment_amount ?? 0)} de ${figures.first_due_date}`,
        ),
        when(agreement.acceptanceDeadline),
        when(agreement.acceptedAt),
        when(agreement.endedAt),
      ];
    }),
    'Nenhum acordo.',
  );
}
