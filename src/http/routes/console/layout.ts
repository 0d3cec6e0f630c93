import type { Operator } from '../../../domain/operators.js';
import { escapeHtml } from '../hosted/layout.js';

export { escapeHtml };

/**
 * The console's one layout: server-rendered Portuguese pages, no script at all, one stylesheet
 * the service serves itself (`/ops/console/console.css`; the Content-Security-Policy allows
 * nothing from another origin). A header with the sections and who is signed in, then the page.
 */
export const CONSOLE_PATH = '/ops/console';

/** Where an operator is, and what each form of the page needs. */
export interface PageContext {
  operator?: Operator | undefined;
  /** The CSRF token of this browser's form cookie (session.ts). */
  csrf: string;
  /** The section the page belongs to (highlighted in the navigation). */
  section?: Section | undefined;
}

export const sections = {
  kyc: ['Fila de KYC', `${CONSOLE_PATH}/kyc`],
  approvals: ['Aprovações', `${CONSOLE_PATH}/approvals`],
  disbursements: ['Desembolsos', `${CONSOLE_PATH}/disbursements`],
  pix: ['Pix não identificados', `${CONSOLE_PATH}/unmatched-pix`],
  devolucoes: ['Devoluções', `${CONSOLE_PATH}/devolucoes`],
  reconciliation: ['Conciliação', `${CONSOLE_PATH}/reconciliation`],
  ledger: ['Balancete', `${CONSOLE_PATH}/trial-balance`],
  operators: ['Operadores', `${CONSOLE_PATH}/operators`],
  erasures: ['Apagamentos', `${CONSOLE_PATH}/erasures`],
  audit: ['Auditoria', `${CONSOLE_PATH}/audit`],
} as const;
export type Section = keyof typeof sections;

const roleNames: Record<string, string> = {
  kyc_reviewer: 'análise de KYC',
  disbursement: 'desembolsos',
  payments: 'pagamentos',
  admin: 'administração',
  workflow_viewer: 'workflows',
  metrics_reader: 'métricas',
};

export const roleName = (role: string) => roleNames[role] ?? role;

export function consolePage(title: string, context: PageContext, body: string): string {
  const operator = context.operator;
  const header = operator
    ? `<header class="top">
<p class="brand"><a href="${CONSOLE_PATH}">Back office</a></p>
<nav aria-label="Seções"><ul>${Object.entries(sections)
        .map(
          ([key, [name, href]]) =>
            `<li><a href="${href}"${key === context.section ? ' aria-current="page"' : ''}>${escapeHtml(name)}</a></li>`,
        )
        .join('')}</ul></nav>
<div class="who"><span>Operador <a href="${CONSOLE_PATH}/operators/${escapeHtml(operator.actor.id)}"><code>${escapeHtml(operator.actor.id)}</code></a>${
        operator.roles.length > 0
          ? ` · ${escapeHtml(operator.roles.map(roleName).join(', '))}`
          : ' · sem papéis'
      }</span>
${form(`${CONSOLE_PATH}/sign-out`, context, '<button type="submit" class="link">Sair</button>')}</div>
</header>`
    : `<header class="top"><p class="brand">Back office</p></header>`;
  return `<!doctype html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Back office</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${CONSOLE_PATH}/console.css">
</head><body>${header}
<main><h1>${escapeHtml(title)}</h1>
${body}</main></body></html>`;
}

/** A form posting to `action` with the CSRF token every console POST must carry. */
export const form = (
  action: string,
  context: Pick<PageContext, 'csrf'>,
  body: string,
  attrs = '',
) =>
  `<form method="post" action="${escapeHtml(action)}"${attrs}>
<input type="hidden" name="csrf" value="${escapeHtml(context.csrf)}">
${body}
</form>`;

/** An outcome or a notice, announced to screen readers. */
export const notice = (kind: 'ok' | 'error' | 'info', html: string) =>
  `<div class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${html}</div>`;

/** A table: `head` the column names, `rows` cells already escaped (HTML). */
export function table(caption: string, head: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${escapeHtml(empty)}</p>`;
  return `<div class="scroll"><table>
<caption>${escapeHtml(caption)}</caption>
<thead><tr>${head.map((name) => `<th scope="col">${escapeHtml(name)}</th>`).join('')}</tr></thead>
<tbody>${rows.map((cells) => `<tr>${cells.map((cell) => `<td>${cell}</td>`).join('')}</tr>`).join('\n')}</tbody>
</table></div>`;
}

/** The link to the next page of a list, with the API's cursor (none on the last page). */
export function nextPage(path: string, query: Record<string, string | undefined>, last?: string) {
  if (last === undefined) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(key, value);
  params.set('starting_after', last);
  return `<p class="pager"><a href="${escapeHtml(`${path}?${params.toString()}`)}">Próxima página</a></p>`;
}

/** Centavos as reais, `R$ 1.234,56`, in integer arithmetic (no float touches an amount). */
export function reais(centavos: number): string {
  const negative = centavos < 0;
  const digits = String(Math.abs(centavos)).padStart(3, '0');
  const whole = digits.slice(0, -2).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${negative ? '−' : ''}R$ ${whole},${digits.slice(-2)}`;
}

const dateTime = new Intl.DateTimeFormat('pt-BR', {
  timeZone: 'America/Sao_Paulo',
  dateStyle: 'short',
  timeStyle: 'medium',
});

/** A moment as staff in Brazil read it (America/Sao_Paulo), with the ISO form in `datetime`. */
export const when = (at: Date | string | null | undefined) => {
  if (at === null || at === undefined) return '—';
  const date = typeof at === 'string' ? new Date(at) : at;
  return `<time datetime="${date.toISOString()}">${escapeHtml(dateTime.format(date))}</time>`;
};

export const code = (text: string | null | undefined) =>
  text ? `<code>${escapeHtml(text)}</code>` : '—';
