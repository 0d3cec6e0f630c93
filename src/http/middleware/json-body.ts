import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { problems } from '../../errors.js';
import type { AppState } from '../context.js';

export const JSON_BODY_LIMIT = '1mb';

const parse = koaBody({
  json: true,
  jsonStrict: true,
  jsonLimit: JSON_BODY_LIMIT,
  urlencoded: false,
  text: false,
  multipart: false,
  patchKoa: true,
  parsedMethods: [
    HttpMethodEnum.POST,
    HttpMethodEnum.PUT,
    HttpMethodEnum.PATCH,
    HttpMethodEnum.DELETE,
  ],
  onError: (error) => {
    throw error;
  },
});

/**
 * Accepts a JSON body (or none at all). A body in any other media type is a 415, an oversized one a
 * 413 and an unparseable one a 400 — each before the handler runs, so nothing changes.
 */
export const jsonBody: Middleware<AppState> = async (ctx, next) => {
  const hasBody = ctx.request.length > 0 || ctx.get('Transfer-Encoding') !== '';
  if (hasBody && !ctx.is('application/json', 'application/*+json')) {
    throw problems.unsupportedMediaType(['application/json']);
  }
  if (!hasBody) {
    ctx.request.body = undefined;
    await next();
    return;
  }
  await parse(ctx, async () => {});
  await next();
};
