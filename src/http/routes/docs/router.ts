import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { errorCatalogue, fieldErrorCatalogue } from '../../../errors.js';
import type { AppState } from '../../context.js';

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`).replace(/`([^`]+)`/g, '<code>$1</code>');

const page = (title: string, body: string, head = '') => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">${head}
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
  table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #ddd; vertical-align: top; }
  code { background: #f3f3f3; padding: 0 .2rem; border-radius: 3px; } tr:target { background: #fff6d5; }
</style></head><body>${body}</body></html>`;

// The reference UI's files come from the swagger-ui-dist package: served from here, no CDN.
const swaggerUiDir = dirname(
  createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'),
);
const assets: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

const referenceHtml = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Embedded credit API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><p style="font:14px system-ui;margin:1rem 2rem">Error codes: <a href="/docs/errors">/docs/errors</a></p>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/v3/openapi.json', dom_id: '#reference', deepLinking: true, defaultModelsExpandDepth: 1 });</script>
</body></html>`;

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
</tbody></table>
<h2 id="field-codes">Field codes</h2>
<p>A <code>validation_error</code> (422) lists each invalid field in <code>errors[]</code> with its
<code>path</code> (<code>body.amount</code>, <code>query.limit</code>, <code>header.Idempotency-Key</code>),
a <code>code</code> from this list — one name per kind of problem — and a <code>message</code> for a
person (the bounds, the format expected).</p>
<table><thead><tr><th>code</th><th>meaning</th></tr></thead><tbody>
${Object.entries(fieldErrorCatalogue)
  .map(
    ([code, meaning]) =>
      `<tr id="field-${code}"><td><code>${code}</code></td><td>${escape(meaning)}</td></tr>`,
  )
  .join('\n')}
</tbody></table>`,
);

/**
 * Public documentation: the partner OpenAPI document, its reference page and the error list, all
 * without a token. The ops and PSP documents sit behind the ops token, beside their APIs.
 */
export function docsRoutes(deps: {
  partnerDocument: () => unknown;
  opsDocument: () => unknown;
  pspDocument: () => unknown;
  /** The ops guard, and the audit of a break-glass token's read. */
  opsGuard: Middleware<AppState>[];
}): Router<AppState> {
  const router = new Router<AppState>();
  const html =
    (body: string): Middleware<AppState> =>
    (ctx) => {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = body;
    };

  router.get('/v3/openapi.json', (ctx) => {
    ctx.body = deps.partnerDocument();
  });
  router.get('/ops/v1/openapi.json', ...deps.opsGuard, (ctx) => {
    ctx.body = deps.opsDocument();
  });
  router.get('/psp/v1/openapi.json', ...deps.opsGuard, (ctx) => {
    ctx.body = deps.pspDocument();
  });
  router.get('/docs', html(referenceHtml));
  router.get('/docs/errors', html(errorsHtml));
  router.get('/docs/assets/:file', async (ctx, next) => {
    const type = assets[ctx.params.file ?? ''];
    if (!type) {
      await next();
      return;
    }
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = await readFile(join(swaggerUiDir, ctx.params.file ?? ''));
  });
  return router;
}
