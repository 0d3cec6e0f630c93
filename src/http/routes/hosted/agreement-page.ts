import type { Agreement } from '../../../db/queries/agreements.js';
import { brDate, brDateTime } from '../../../domain/business-date.js';
import { formatBrl, formatRate } from '../../../domain/money.js';
import {
  codeForm,
  escapeHtml as escape,
  notice as noticeHtml,
  page,
  postForm,
  type HostedLink,
} from './layout.js';

type Notice = { kind: 'ok' | 'error'; text: string };

export const agreementLinkPath = (token: string) =>
  `/hosted/agreements/${encodeURIComponent(token)}`;

const statusText: Record<Agreement['status'], string> = {
  pending_acceptance: 'aguardando o seu aceite',
  pending_entry: 'aceito; aguardando o pagamento da entrada',
  active: 'em vigor',
  fulfilled: 'cumprido',
  lapsed: 'caducado (não aceito ou sem entrada no prazo)',
  broken: 'quebrado',
};

/**
 * What the link alone shows: which agreement of which loan, and the button that sends a code to
 * the borrower's e-mail on record. No figure, no name: the link may have been forwarded.
 */
export function identifyPage(agreement: Agreement, link: HostedLink, notice?: Notice): string {
  return page(
    'Acordo de pagamento',
    `<h1>Acordo de pagamento</h1>
${notice ? noticeHtml(notice.kind, notice.text) : ''}
<p>Acordo <code>${agreement.id}</code> do empréstimo <code>${agreement.loanId}</code>.</p>
<p>Para ver os termos e aceitar o acordo, enviaremos um código de 6 dígitos para o seu e-mail cadastrado.</p>
${postForm(`${agreementLinkPath(link.token)}/code`, link, '<button type="submit">Enviar código</button>')}
<p class="muted">Aceite até ${brDateTime(agreement.acceptanceDeadline)} (horário de Brasília).</p>`,
  );
}

/** The form to type the code, telling where it went (the borrower's masked e-mail). */
export function codePage(
  link: HostedLink,
  codeId: string,
  channel: string | undefined,
  notice?: Notice,
): string {
  return page(
    'Digite o código',
    `<h1>Digite o código</h1>
${notice ? noticeHtml(notice.kind, notice.text) : ''}
<p>Enviamos um código de 6 dígitos para <strong>${escape(channel?.replace(/^email:/, '') ?? 'o seu e-mail cadastrado')}</strong>. Ele vale por 10 minutos.</p>
${codeForm(agreementLinkPath(link.token), link, codeId)}`,
  );
}

const amountRows = (rows: [string, string][]) =>
  `<table>${rows.map(([k, v]) => `<tr><th>${k}</th><td class="n">${v}</td></tr>`).join('')}</table>`;

/**
 * What the borrower sees once their code proved who they are: the debt row by row, the discount,
 * the agreed balance, the new rows, the term (the PDF whose hash is shown) and — while it waits
 * for an acceptance — the form that accepts that term. No script, no external asset.
 */
export function termsPage(
  agreement: Agreement & { termSha256: string },
  link: HostedLink,
  open: boolean,
  notice?: Notice,
): string {
  const f = agreement.figures;
  const covered = f.rows
    .map(
      (row) =>
        `<tr><td>${row.number}</td><td class="nowrap">${brDate(row.due_date)}${row.status === 'pending' ? ' (a vencer)' : ''}</td><td class="n">${formatBrl(row.installment_amount)}</td><td class="n">${formatBrl(row.late_fee_amount + row.late_interest_amount)}</td><td class="n">${formatBrl(row.value_amount)}</td></tr>`,
    )
    .join('');
  const schedule = f.schedule
    .map(
      (row) =>
        `<tr><td>${row.number}</td><td class="nowrap">${brDate(row.due_date)}</td><td class="n">${formatBrl(row.installment_amount)}</td></tr>`,
    )
    .join('');
  const form = open
    ? postForm(
        agreementLinkPath(link.token),
        link,
        `<input type="hidden" name="term_sha256" value="${escape(agreement.termSha256)}">
<label><input type="checkbox" name="agree" value="yes" required> Li o termo do acordo e concordo com ele.</label>
<button type="submit">Aceitar o acordo</button>`,
      )
    : agreement.acceptedAt
      ? `<p class="notice ok">Acordo aceito em ${brDateTime(agreement.acceptedAt)}.</p>`
      : `<p class="notice">Este acordo está ${statusText[agreement.status]}; não recebe mais aceite.</p>`;
  return page(
    'Acordo de pagamento',
    `<h1>Acordo de pagamento</h1>
${notice ? noticeHtml(notice.kind, notice.text) : ''}
<p>Acordo <code>${agreement.id}</code> do empréstimo <code>${agreement.loanId}</code>, de ${brDate(f.date)} — ${statusText[agreement.status]}.</p>
<h2>Parcelas renegociadas</h2>
<table><tr><th>Nº</th><th>Vencimento</th><th class="n">Parcela</th><th class="n">Multa e juros de mora</th><th class="n">Valor na dívida</th></tr>${covered}</table>
${amountRows([
  ['Dívida na data do acordo', formatBrl(f.debt_amount)],
  ['Desconto (juros e encargos)', formatBrl(f.discount_amount)],
  ['Saldo acordado', formatBrl(f.agreed_amount)],
  ['Juros', `${formatRate(f.monthly_interest_rate)} a.m.`],
  ['Total a pagar', formatBrl(f.total_amount)],
])}
<h2>Novas parcelas (${f.installments})</h2>
<table><tr><th>Nº</th><th>Vencimento</th><th class="n">Valor</th></tr>${schedule}</table>
<p>A primeira parcela (entrada) precisa ser paga até o fim do seu vencimento, ${brDate(f.first_due_date)}: sem ela, o acordo caduca e o empréstimo segue como estava. Uma parcela do acordo muito atrasada quebra o acordo, e as parcelas renegociadas voltam com multa e juros de mora, menos o que você pagou (veja o termo).</p>
<p><a href="${agreementLinkPath(link.token)}/term">Baixar o termo do acordo (PDF)</a></p>
<p class="muted">Código de integridade do termo (SHA-256): <code>${escape(agreement.termSha256)}</code></p>
${form}`,
  );
}

/** The link once the agreement no longer takes an acceptance (410). */
export function endedPage(agreement: Agreement, deadlinePassed: boolean): string {
  const why =
    agreement.status === 'pending_acceptance' && deadlinePassed
      ? 'o prazo para aceitar terminou'
      : `este acordo está ${statusText[agreement.status]}`;
  return page(
    'Link encerrado',
    `<h1>Este link não está mais ativo</h1><p>Não é mais possível aceitar por ele: ${why}.</p>`,
  );
}
