import { HttpMethodEnum, koaBody } from 'koa-body';

/** Every hosted answer is a page for a person: HTML, never cached, never JSON. */
export function html(
  ctx: { status: number; type: string; body: unknown },
  status: number,
  body: string,
): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
}

export const parseForm = koaBody({
  json: false,
  urlencoded: true,
  formLimit: '8kb',
  text: false,
  multipart: false,
  parsedMethods: [HttpMethodEnum.POST],
});

/** A form field as text ('' when absent or not text). */
export const field = (ctx: { request: object }, name: string): string => {
  const value = (ctx.request as { body?: Record<string, unknown> }).body?.[name];
  return typeof value === 'string' ? value.trim() : '';
};
