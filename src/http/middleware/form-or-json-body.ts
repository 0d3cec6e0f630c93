import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { problems } from '../../errors.js';
import type { AppState } from '../context.js';

const parse = koaBody({
  json: true,
  jsonStrict: true,
  jsonLimit: '1mb',
  urlencoded: true,
  formLimit: '1mb',
  text: false,
  multipart: false,
  patchKoa: true,
  parsedMethods: [HttpMethodEnum.POST],
  onError: (error) => {
    throw error;
  },
});

/** For the OAuth token endpoint, which takes `application/x-www-form-urlencoded` or JSON. */
export const formOrJsonBody: Middleware<AppState> = async (ctx, next) => {
  const hasBody = ctx.request.length > 0 || ctx.get('Transfer-Encoding') !== '';
  if (hasBody && !ctx.is('application/x-www-form-urlencoded', 'application/json')) {
    throw problems.unsupportedMediaType(['application/x-www-form-urlencoded', 'application/json']);
  }
  if (hasBody) await parse(ctx, async () => {});
  else ctx.request.body = undefined;
  await next();
};
