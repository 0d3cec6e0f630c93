import type { FieldError, Problem } from './types.js';

/** A problem's `code`: the catalogue's names, or one a newer server added. */
export type ProblemCode = Problem['code'] | (string & {});

/**
 * An RFC 9457 problem the API answered (any 4xx or 5xx): its `status`, stable `code`, `detail`,
 * and for 422 `validation_error` one entry per invalid field in `errors`.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly code: ProblemCode;
  readonly title: string;
  readonly detail: string;
  /** Link to the description of the code. */
  readonly type: string | undefined;
  /** Each invalid field (422 `validation_error`); empty otherwise. */
  readonly errors: FieldError[];
  /** The `X-Request-Id` of the answer, to quote to support. */
  readonly requestId: string | undefined;
  /** The problem as sent. */
  readonly body: unknown;

  constructor(status: number, body: unknown, requestId?: string) {
    const problem = (typeof body === 'object' && body !== null ? body : {}) as Partial<
      Problem & { errors: FieldError[] }
    >;
    const detail = problem.detail ?? (typeof body === 'string' ? body : `HTTP ${status}`);
    super(`${status} ${problem.code ?? 'http_error'}: ${detail}`);
    this.status = status;
    this.code = problem.code ?? 'http_error';
    this.title = problem.title ?? '';
    this.detail = detail;
    this.type = problem.type;
    this.errors = Array.isArray(problem.errors) ? problem.errors : [];
    this.requestId = requestId;
    this.body = body;
  }
}

/** Reads a failed answer's body (problem+json, or whatever came) into an {@link ApiError}. */
export async function apiErrorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return new ApiError(response.status, body, response.headers.get('x-request-id') ?? undefined);
}
