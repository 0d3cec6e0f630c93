import { HttpMethodEnum, koaBody } from 'koa-body';
import type { AppContext } from '../../context.js';
import type { HostedLink } from './layout.js';

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

/** What a person's act on a hosted page records of the request: its address and browser. */
export const evidenceOf = (ctx: AppContext) => ({
  ipAddress: ctx.ip || null,
  userAgent: ctx.get('User-Agent') || null,
});

/** The page's link (its token) and the form's CSRF token, for the pages it renders. */
export const linkOf = (ctx: AppContext): HostedLink => ({
  token: ctx.params.token ?? '',
  csrf: ctx.state.csrf ?? '',
});
