import type { components } from './bcb/api.js';

export type Problema = components['schemas']['Problema'];

/**
 * What can go wrong calling the PSP, reduced to what a caller decides on: `retryable` (the PSP or
 * the way to it is down or slow; the same call may be made again — every call of the client is
 * safe to repeat) or final (the PSP refused this request and will refuse it again).
 */
export type PspErrorCode =
  | 'unavailable' // 5xx, 429, 408
  | 'timeout' // no answer within the client's timeout
  | 'network' // the connection failed or broke
  | 'unauthorized' // our credentials or certificate were refused
  | 'forbidden' // authenticated, but not allowed (a product not contracted)
  | 'not_found'
  | 'conflict' // e.g. an idempotency key reused with another request
  | 'rejected' // 400: the request breaks the document or the PSP's rules (see `problem`)
  | 'invalid_answer'; // the PSP answered something we cannot read

const RETRYABLE: ReadonlySet<PspErrorCode> = new Set(['unavailable', 'timeout', 'network']);

export class PspError extends Error {
  readonly retryable: boolean;

  constructor(
    readonly code: PspErrorCode,
    message: string,
    readonly status?: number,
    /** The PSP's problem (RFC 7807, with `violacoes`), when it sent one. */
    readonly problem?: Problema,
  ) {
    super(message);
    this.name = 'PspError';
    this.retryable = RETRYABLE.has(code);
  }
}

export function errorForStatus(status: number, what: string, problem?: Problema): PspError {
  const violations = (problem?.violacoes ?? [])
    .map((violation) => `${violation.propriedade ?? '?'}: ${violation.razao ?? '?'}`)
    .join('; ');
  const detail = problem
    ? `: ${problem.title}${problem.detail ? ` (${problem.detail})` : ''}${violations ? ` [${violations}]` : ''}`
    : '';
  const message = `${what} answered ${status}${detail}`;
  if (status >= 500 || status === 429 || status === 408)
    return new PspError('unavailable', message, status, problem);
  const code: PspErrorCode =
    status === 401
      ? 'unauthorized'
      : status === 403
        ? 'forbidden'
        : status === 404
          ? 'not_found'
          : status === 409
            ? 'conflict'
            : 'rejected';
  return new PspError(code, message, status, problem);
}
