import Router from '@koa/router';
import { errorCatalogue } from '../../../errors.js';
import type { AppState } from '../../context.js';

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`).replace(/`([^`]+)`/g, '<code>$1</code>');

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
  table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #ddd; vertical-align: top; }
  code { background: #f3f3f3; padding: 0 .2rem; border-radius: 3px; } tr:target { background: #fff6d5; }
</style></head><body>${body}</body></html>`;

/** Public documentation pages, served without a token and without any external asset. */
export function docsRoutes(): Router<AppState> {
  const router = new Router<AppState>();

  const errorsHtml = page(
    'Errors — Embedded credit API',
    `<h1>Errors</h1>
<p>Every error is an RFC 9457 problem (<code>application/problem+json</code>) with
<code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code> and a stable
<code>code</code>. Each problem's <code>type</code> links to its row below.</p>
<table><thead><tr><th>code</th><th>status</th><th>meaning</th></tr></thead><tbody>
${Object.entries(errorCatalogue)
  .sort(([, a], [, b]) => a.status - b.status)
  .map(
    ([code, entry]) =>
      `<tr id="${code}"><td><code>${code}</code></td><td>${entry.status} ${escape(entry.title)}</td><td>${escape(entry.meaning)}</td></tr>`,
  )
  .join('\n')}
</tbody></table>`,
  );

  const indexHtml = page(
    'Embedded credit API',
    `<h1>Embedded credit API</h1>
<ul>
  <li><a href="/docs/errors">Errors</a>: every error code and its meaning.</li>
  <li><a href="/healthz">/healthz</a>, <a href="/readyz">/readyz</a>, <a href="/metrics">/metrics</a>: process health, readiness and Prometheus metrics.</li>
</ul>`,
  );

  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = indexHtml;
  });
  router.get('/docs/errors', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = errorsHtml;
  });
  return router;
}
