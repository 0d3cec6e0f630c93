import { Decimal } from 'decimal.js';
import type { LoanView } from '../../../db/queries/loans.js';
import { formatBrl } from '../../../domain/money.js';

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const percent = (rate: number) => `${new Decimal(rate).times(100).toFixed(2).replace('.', ',')} %`;

const brDate = (isoDate: string) => isoDate.split('-').reverse().join('/');

/** `***.982.247-**`: enough for a signer to recognise their line, not enough to read the cpf. */
const maskCpf = (cpf: string) => `***.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-**`;

export const page = (title: string, body: string) => `<!doctype html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>${escape(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 17px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
  table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #ddd; }
  td.n { text-align: right; font-variant-numeric: tabular-nums; }
  label { display: block; margin: .8rem 0 .3rem; }
  input[type=text] { font: inherit; padding: .5rem; width: 14rem; }
  button { font: inherit; padding: .7rem 1.4rem; border: 0; border-radius: .4rem; background: #0b6e4f; color: #fff; cursor: pointer; margin-top: 1rem; }
  .notice { padding: .8rem 1rem; border-radius: .4rem; background: #fff4e5; }
  .ok { background: #e6f4ea; }
  code { word-break: break-all; font-size: .85em; }
</style></head><body>${body}</body></html>`;

const statusText: Record<LoanView['status'], string> = {
  awaiting_signatures: 'aguardando assinaturas',
  processing: 'assinado; liberação do dinheiro em andamento',
  active: 'ativo (dinheiro liberado)',
  finished: 'quitado',
  cancelled: 'cancelado',
  error: 'encerrado por erro na liberação',
};

/**
 * The signing page: the terms a signer agrees to, a link to the whole contract (the PDF whose hash
 * is shown), who has signed, and — while the loan takes signatures — the form where a signer
 * confirms with their cpf. No script, no external asset.
 */
export function signingPage(
  loan: LoanView,
  token: string,
  notice?: { kind: 'ok' | 'error'; text: string },
): string {
  const f = loan.figures;
  const rows: [string, string][] = [
    ['Valor liberado', formatBrl(f.requested_amount)],
    ['IOF (financiado)', formatBrl(f.iof_amount)],
    ['Valor financiado', formatBrl(f.principal_amount)],
    ['Parcelas', `${f.installments} × ${formatBrl(f.installment_amount)}`],
    ['Primeiro vencimento', brDate(f.first_due_date)],
    ['Total a pagar', formatBrl(f.total_amount)],
    ['Juros', `${percent(f.monthly_interest_rate)} a.m. · ${percent(f.annual_interest_rate)} a.a.`],
    ['CET', `${percent(f.cet_monthly)} a.m. · ${percent(f.cet_annual)} a.a.`],
  ];
  const signers = loan.signers
    .map(
      (s) =>
        `<tr><td>${escape(s.name)}</td><td>${maskCpf(s.cpf)}</td><td>${s.signedAt ? `assinou em ${s.signedAt.toISOString()}` : 'pendente'}</td></tr>`,
    )
    .join('');
  const open = loan.status === 'awaiting_signatures';
  const form = open
    ? `<form method="post">
<label for="cpf">Seu CPF</label>
<input id="cpf" name="cpf" type="text" inputmode="numeric" autocomplete="off" required maxlength="14" placeholder="000.000.000-00">
<label><input type="checkbox" name="agree" value="yes" required> Li o contrato e concordo com seus termos.</label>
<button type="submit">Assinar</button>
</form>`
    : `<p class="notice">Este empréstimo está ${statusText[loan.status]}; não recebe mais assinaturas.</p>`;
  const message = notice
    ? `<p class="notice${notice.kind === 'ok' ? ' ok' : ''}" role="status">${escape(notice.text)}</p>`
    : '';
  return page(
    'Assinatura do contrato',
    `<h1>Cédula de Crédito Bancário</h1>
${message}
<p>Empréstimo <code>${loan.id}</code> — ${statusText[loan.status]}.</p>
<table>${rows.map(([k, v]) => `<tr><th>${k}</th><td class="n">${v}</td></tr>`).join('')}</table>
<p><a href="/hosted/signing/${encodeURIComponent(token)}/contract">Ler o contrato completo (PDF)</a><br>
SHA-256 do contrato: <code>${loan.contractSha256}</code></p>
<h2>Assinaturas (${loan.signers.filter((s) => s.signedAt).length} de ${loan.signers.length})</h2>
<table>${signers}</table>
${form}`,
  );
}
