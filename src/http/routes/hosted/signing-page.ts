import type { LoanView, LoanSigner } from '../../../db/queries/loans.js';
import { brDate, brDateTime } from '../../../domain/business-date.js';
import { maskTaxId } from '../../../domain/masking.js';
import { formatBrl, formatRate } from '../../../domain/money.js';
import {
  codeForm,
  escapeHtml as escape,
  notice as noticeHtml,
  page,
  postForm,
  type HostedLink,
} from './layout.js';

const statusText: Record<LoanView['status'], string> = {
  awaiting_signatures: 'aguardando assinaturas',
  processing: 'assinado; liberação do dinheiro em andamento',
  active: 'ativo (dinheiro liberado)',
  finished: 'quitado',
  cancelled: 'cancelado',
  error: 'encerrado por erro na liberação',
};

type Notice = { kind: 'ok' | 'error'; text: string };

const linkPath = (token: string) => `/hosted/signing/${encodeURIComponent(token)}`;

const signedCount = (loan: LoanView) => loan.signers.filter((s) => s.signedAt).length;

/** Who signs, to a signer the code proved: names and masked cpfs. */
const signerRows = (loan: LoanView) =>
  loan.signers
    .map(
      (s) =>
        `<tr><td>${escape(s.name)}<br><span class="nowrap">${maskTaxId(s.cpf)}</span></td><td>${s.signedAt ? `assinou em <span class="nowrap">${brDateTime(s.signedAt)}</span>` : 'pendente'}</td></tr>`,
    )
    .join('');

/**
 * What the link alone shows: which loan, how many have signed, and where a signer states their
 * cpf to receive a code. No cpf (even masked: six digits of a mask leave about a thousand
 * candidates), no name, no figure, no contract.
 */
export function identifyPage(loan: LoanView, link: HostedLink, notice?: Notice): string {
  return page(
    'Assinatura do contrato',
    `<h1>Assinatura do contrato</h1>
${notice ? noticeHtml(notice.kind, notice.text) : ''}
<p>Cédula de Crédito Bancário do empréstimo <code>${loan.id}</code>.</p>
<p>Para ler e assinar o contrato, informe seu CPF. Enviaremos um código de 6 dígitos para o e-mail cadastrado de quem assina com esse CPF.</p>
${postForm(
  `${linkPath(link.token)}/code`,
  link,
  `<label for="cpf">Seu CPF</label>
<input id="cpf" name="cpf" type="text" inputmode="numeric" autocomplete="off" required maxlength="14" placeholder="000.000.000-00">
<button type="submit">Enviar código</button>`,
)}
<p>Assinaturas: ${signedCount(loan)} de ${loan.signers.length}.</p>`,
  );
}

/**
 * After a cpf was stated: the form to type the code. The same page whoever the cpf is (issue 37):
 * it does not say where the code went, nor whether one went at all.
 */
export function codePage(link: HostedLink, codeId: string, notice?: Notice): string {
  return page(
    'Digite o código',
    `<h1>Digite o código</h1>
${notice ? noticeHtml(notice.kind, notice.text) : ''}
<p>Se este CPF assina o contrato, enviamos um código de 6 dígitos para o e-mail cadastrado de quem assina com ele. O código vale por 10 minutos.</p>
${codeForm(linkPath(link.token), link, codeId)}`,
  );
}

/**
 * How the borrower will pay (contract §14), in plain words: each row by a Pix charge the partner
 * issues for what it owes that day (a charge for rows lasts until the end of the day it is made),
 * recognised by itself; charges for late rows, the payoff or a stated amount; and, for a customer
 * without a cnpj, the withdrawal right (CDC art. 49: until the end of the 7th day after the
 * release, returning the amount released less what was paid, no interest, no fee).
 */
function howToPay(loan: LoanView, borrower: { hasCnpj: boolean }): string {
  const figures = loan.figures;
  const withdrawal = borrower.hasCnpj
    ? ''
    : `<p><strong>Direito de arrependimento.</strong> Você pode desistir deste empréstimo até o fim do 7º dia depois da liberação do dinheiro (Código de Defesa do Consumidor, art. 49), devolvendo só o valor liberado (${escape(formatBrl(figures.requested_amount))}), sem juros nem tarifas, menos o que já tiver pago. Para isso, peça à empresa: ela gera uma cobrança Pix desse valor, válida até o fim do prazo; paga, o empréstimo é cancelado.</p>`;
  return `<h2>Como pagar</h2>
<p>Cada parcela é paga por Pix. Antes de cada vencimento (o primeiro em ${escape(brDate(figures.first_due_date))}), a empresa disponibiliza uma cobrança Pix — QR code ou “Pix copia e cola” — com o valor devido no dia em que ela é gerada. A cobrança vale até o fim desse dia; depois, peça uma nova.</p>
<p>O pagamento é reconhecido sozinho: não é preciso enviar comprovante. Pago antes do vencimento, o valor tem desconto dos juros ainda não corridos. A empresa também pode gerar cobranças para parcelas em atraso (com multa e juros de atraso), para quitar todo o saldo ou para o valor que você quiser antecipar.</p>
${withdrawal}`;
}

/**
 * What a signer sees once their code proved who they are: the terms, how the loan is paid, the
 * whole contract (the PDF whose hash is shown), who has signed, and — while the loan takes
 * signatures and this signer has not signed — the form that signs as them. No script, no external
 * asset. `borrower.hasCnpj`: the customer has a cnpj (no withdrawal right to tell of).
 */
export function signingPage(
  loan: LoanView,
  link: HostedLink,
  signer: LoanSigner,
  borrower: { hasCnpj: boolean },
  notice?: Notice,
): string {
  const figures = loan.figures;
  const rows: [string, string][] = [
    ['Valor liberado', formatBrl(figures.requested_amount)],
    ['IOF (financiado)', formatBrl(figures.iof_amount)],
    ['Valor financiado', formatBrl(figures.principal_amount)],
    ['Parcelas', `${figures.installments} × ${formatBrl(figures.installment_amount)}`],
    ['Primeiro vencimento', brDate(figures.first_due_date)],
    ['Total a pagar', formatBrl(figures.total_amount)],
    [
      'Juros',
      `${formatRate(figures.monthly_interest_rate)} a.m. · ${formatRate(figures.annual_interest_rate)} a.a.`,
    ],
    ['CET', `${formatRate(figures.cet_monthly)} a.m. · ${formatRate(figures.cet_annual)} a.a.`],
  ];
  const form = signer.signedAt
    ? `<p class="notice ok">Você assinou em ${brDateTime(signer.signedAt)}.</p>`
    : loan.status === 'awaiting_signatures'
      ? postForm(
          linkPath(link.token),
          link,
          `<label><input type="checkbox" name="agree" value="yes" required> Li o contrato e concordo com seus termos.</label>
<button type="submit">Assinar como ${escape(signer.name)} (${maskTaxId(signer.cpf)})</button>`,
        )
      : `<p class="notice">Este empréstimo está ${statusText[loan.status]}; não recebe mais assinaturas.</p>`;
  return page(
    'Assinatura do contrato',
    `<h1>Cédula de Crédito Bancário</h1>
${notice ? noticeHtml(notice.kind, notice.text) : ''}
<p>Empréstimo <code>${loan.id}</code> — ${statusText[loan.status]}.</p>
<table>${rows.map(([k, v]) => `<tr><th>${k}</th><td class="n">${v}</td></tr>`).join('')}</table>
${howToPay(loan, borrower)}
<p><a href="${linkPath(link.token)}/contract">Baixar o contrato completo (PDF)</a></p>
<p class="muted">Código de integridade do contrato (SHA-256): <code>${loan.contractSha256}</code></p>
<h2>Assinaturas (${signedCount(loan)} de ${loan.signers.length})</h2>
<table>${signerRows(loan)}</table>
${form}`,
  );
}

/** The link once the loan left `awaiting_signatures` or its deadline passed (410). */
export function endedPage(loan: LoanView): string {
  const why =
    loan.status === 'awaiting_signatures'
      ? 'o prazo para assinar terminou'
      : `este empréstimo está ${statusText[loan.status]}`;
  return page(
    'Link encerrado',
    `<h1>Este link não está mais ativo</h1><p>Não é mais possível assinar por ele: ${why}.</p>`,
  );
}
