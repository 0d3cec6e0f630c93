import type { Environment } from '../environments.js';
import { formatBrl, formatRate } from '../money.js';
import type { AgreementFigures } from './agreements.js';
import { brDate, brDateTime } from '../business-date.js';
import { A4, formatCnpj, formatCpf, MARGIN, openDocument } from './contract-pdf.js';
import type { LateChargeRates } from './repayment.js';

export interface AgreementTermInput {
  agreementId: string;
  loanId: string;
  /** When the agreement is made, on the customer's clock: the issue date and the PDF's dates. */
  issuedAt: Date;
  /** Not accepted by then, it lapses (the end of the first row's due date). */
  acceptanceDeadline: Date;
  environment: Environment;
  lender: { name: string; cnpj: string };
  borrower: { name: string; cpf: string; cnpj: string | null; tradingName: string | null };
  figures: AgreementFigures;
  /** The loan's late-charge terms, which the agreement's rows carry too. */
  lateCharges: LateChargeRates;
  /** AGREEMENT_BREAK_DAYS: a row of the agreement overdue longer breaks it. */
  breakDays: number;
}

/**
 * The term of a payment agreement (termo de acordo, contract §17): the parties, the contract it
 * renegotiates, the debt on the agreement's date row by row, the discount, the agreed balance,
 * the new rows and the clauses (entry, lapse, break). Pure and deterministic, like the contract's
 * (`renderContractPdf`): the same input gives the same bytes, so its SHA-256 (`term_sha256`)
 * identifies what the borrower accepts.
 */
export async function renderAgreementTermPdf(input: AgreementTermInput): Promise<Uint8Array> {
  const { doc, layout } = await openDocument({
    title: `Termo de acordo ${input.agreementId}`,
    subject: 'Termo de acordo de pagamento',
    lender: input.lender,
    issuedAt: input.issuedAt,
    environment: input.environment,
  });
  const { figures, borrower } = input;
  const right = (label: string, value: string) =>
    layout.row([
      { text: label, x: MARGIN },
      { text: value, x: A4.width - MARGIN, right: true },
    ]);

  layout.line('Termo de Acordo de Pagamento', { bold: true, size: 16 });
  layout.gap();
  layout.line(`Nº ${input.agreementId} · data do acordo ${brDate(figures.date)}`);

  layout.heading('1. Partes e contrato');
  layout.line(`Credor: ${input.lender.name}, CNPJ ${formatCnpj(input.lender.cnpj)}`);
  layout.line(`Devedor: ${borrower.name}, CPF ${formatCpf(borrower.cpf)}`);
  if (borrower.cnpj)
    layout.line(
      `Empresa (MEI): ${borrower.tradingName ?? borrower.name}, CNPJ ${formatCnpj(borrower.cnpj)}`,
    );
  layout.line(`Contrato renegociado: Cédula de Crédito Bancário nº ${input.loanId}`);

  layout.heading('2. Parcelas renegociadas e dívida na data do acordo');
  const debtColumns = [MARGIN, 90, 250, 330, 410, A4.width - MARGIN];
  layout.row(
    [
      { text: 'Nº', x: debtColumns[0]! },
      { text: 'Vencimento', x: debtColumns[1]! },
      { text: 'Parcela', x: debtColumns[2]!, right: true },
      { text: 'Multa', x: debtColumns[3]!, right: true },
      { text: 'Juros de mora', x: debtColumns[4]!, right: true },
      { text: 'Valor na dívida', x: debtColumns[5]!, right: true },
    ],
    true,
  );
  for (const row of figures.rows)
    layout.row([
      { text: String(row.number), x: debtColumns[0]! },
      {
        text: `${brDate(row.due_date)}${row.status === 'pending' ? ' (a vencer)' : ''}`,
        x: debtColumns[1]!,
      },
      { text: formatBrl(row.installment_amount), x: debtColumns[2]!, right: true },
      { text: formatBrl(row.late_fee_amount), x: debtColumns[3]!, right: true },
      { text: formatBrl(row.late_interest_amount), x: debtColumns[4]!, right: true },
      { text: formatBrl(row.value_amount), x: debtColumns[5]!, right: true },
    ]);
  layout.gap();
  right('Principal', formatBrl(figures.principal_amount));
  right('Juros', formatBrl(figures.interest_amount));
  right('Multa', formatBrl(figures.late_fee_amount));
  right('Juros de mora', formatBrl(figures.late_interest_amount));
  right('Dívida na data do acordo', formatBrl(figures.debt_amount));
  right(
    'Desconto (sobre juros e encargos, nunca sobre o principal)',
    formatBrl(figures.discount_amount),
  );
  right('Saldo acordado', formatBrl(figures.agreed_amount));

  layout.heading('3. Novo cronograma');
  right('Taxa de juros', `${formatRate(figures.monthly_interest_rate)} a.m., dias corridos`);
  right('Número de parcelas', String(figures.installments));
  right('Total a pagar', formatBrl(figures.total_amount));
  right('Total de juros', formatBrl(figures.total_interest_amount));
  layout.gap();
  layout.schedule(figures.schedule);

  layout.heading('4. Cláusulas');
  for (const clause of [
    `4.1. Este acordo vale se aceito pelo devedor até ${brDateTime(input.acceptanceDeadline)} (horário de Brasília) e se a primeira parcela (entrada) for paga até o fim do seu vencimento. Sem o aceite ou sem a entrada nesse prazo, o acordo caduca e o contrato segue como estava, sem nenhuma alteração.`,
    '4.2. Paga a entrada, as parcelas renegociadas do contrato deixam de ser cobradas e de acumular multa e juros de mora: o que o devedor deve por elas passa a ser o novo cronograma. Enquanto o acordo vigora, todo pagamento quita primeiro as parcelas do acordo, da mais antiga à mais recente, e depois as parcelas do contrato que o acordo não cobre.',
    `4.3. Parcela do acordo paga após o vencimento tem multa de ${formatRate(input.lateCharges.feeRate)} e juros de mora de ${formatRate(input.lateCharges.monthlyInterestRate)} ao mês, pro rata die, como no contrato. Paga antes do vencimento, tem desconto dos juros ainda não corridos.`,
    `4.4. Uma parcela do acordo vencida há mais de ${input.breakDays} dias quebra o acordo: as parcelas renegociadas voltam como estavam na data do acordo, com multa e juros de mora desde os seus vencimentos originais, o desconto deixa de valer, e tudo o que foi pago desde então é abatido delas como o contrato prevê.`,
    '4.5. O acordo não empresta dinheiro novo nem cobra IOF; o desconto recai somente sobre juros, multa e juros de mora.',
    '4.6. O devedor aceita este termo eletronicamente, na página de aceite, com o código enviado ao seu e-mail cadastrado; o aceite registra data, hora, endereço de origem, navegador e o código de integridade (SHA-256) deste documento.',
  ])
    layout.paragraph(clause);

  layout.footers(`Acordo ${input.agreementId}`);
  return doc.save({ useObjectStreams: false });
}
