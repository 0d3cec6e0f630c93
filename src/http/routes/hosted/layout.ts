/**
 * The hosted pages' one layout: Portuguese, readable on a phone, no script and no asset from
 * anywhere (the Content-Security-Policy of every hosted answer allows inline styles and nothing
 * else; see `hostedPageHeaders`).
 */
export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const page = (title: string, body: string) => `<!doctype html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 17px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
  table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #ddd; }
  td.n { text-align: right; font-variant-numeric: tabular-nums; }
  label { display: block; margin: .8rem 0 .3rem; }
  input[type=text] { font: inherit; padding: .5rem; width: 14rem; max-width: 100%; }
  input.code { letter-spacing: .4em; width: 9rem; }
  input[type=checkbox] { width: 1.3rem; height: 1.3rem; vertical-align: -.25rem; margin-right: .4rem; }
  .nowrap { white-space: nowrap; }
  button { font: inherit; padding: .7rem 1.4rem; border: 0; border-radius: .4rem; background: #0b6e4f; color: #fff; cursor: pointer; margin-top: 1rem; }
  .notice { padding: .8rem 1rem; border-radius: .4rem; background: #fff4e5; }
  .ok { background: #e6f4ea; }
  .muted { color: #555; font-size: .9em; }
  code { word-break: break-all; font-size: .85em; }
</style></head><body>${body}</body></html>`;

/**
 * A link's page as its forms need it: the token (the link's own path) and the CSRF token of the
 * browser it is shown to (forms.ts).
 */
export interface HostedLink {
  token: string;
  csrf: string;
}

/** A form posting to `action`, with the CSRF token every hosted POST must carry. */
export const postForm = (action: string, link: HostedLink, body: string) =>
  `<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${escapeHtml(link.csrf)}">
${body}
</form>`;

/** A page that only says something: a heading and a paragraph. */
export const messagePage = (title: string, text: string) =>
  page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>`);

export const notice = (kind: 'ok' | 'error', text: string) =>
  `<p class="notice${kind === 'ok' ? ' ok' : ''}" role="status">${escapeHtml(text)}</p>`;

/**
 * The code page's form, posting to `{linkPath}/verify` with the code's id, and the way back to ask
 * for another: the same on every hosted link that sends a code.
 */
export const codeForm = (linkPath: string, link: HostedLink, codeId: string) =>
  `${postForm(
    `${linkPath}/verify`,
    link,
    `<input type="hidden" name="code_id" value="${escapeHtml(codeId)}">
<label for="code">Código</label>
<input id="code" class="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="7" placeholder="000000">
<button type="submit">Confirmar</button>`,
  )}
<p class="muted"><a href="${linkPath}">Não recebeu? Pedir um novo código</a> (se o e-mail cadastrado não for o seu, fale com a empresa).</p>`;
