import { randomUUID } from 'node:crypto';
import createFetchClient, { type Client as FetchClient } from 'openapi-fetch';
import { ClientCredentialsTokens } from './auth.js';
import { ApiError } from './errors.js';
import { PageIterator, type Page } from './pagination.js';
import { resources } from './resources.js';
import {
  authenticatedFetch,
  defaultRetryPolicy,
  retryingFetch,
  withIdempotencyKey,
  type RetryPolicy,
} from './transport.js';
import type { paths } from './types.js';

export interface ClientOptions {
  /** Default `EMBEDDED_CREDIT_CLIENT_ID`. */
  clientId?: string;
  /** Default `EMBEDDED_CREDIT_CLIENT_SECRET`. */
  clientSecret?: string;
  /** The API's origin. Default `EMBEDDED_CREDIT_API_URL`, else `http://localhost:3000`. */
  baseUrl?: string;
  retry?: Partial<RetryPolicy>;
  /** How long before its expiry a token is renewed (default 60 s). */
  tokenRenewBeforeMs?: number;
  /** The clock tokens expire by (default `Date.now`). */
  now?: () => number;
  /** The fetch under everything (default the global one). */
  fetch?: (request: Request) => Promise<Response>;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** Per call: a key of your own (to retry across processes), or a signal to abort. */
export interface RequestOptions {
  idempotencyKey?: string;
  signal?: AbortSignal;
}

type Answer<T> = Promise<{ data?: T; error?: unknown; response: Response }>;

/** The openapi-fetch client with the SDK's transport, and the few helpers resources share. */
export interface Core {
  api: FetchClient<paths>;
  /** The answer's body, or the API's problem thrown as an {@link ApiError}. */
  call: <T>(answer: Answer<T>) => Promise<T>;
  /** A list operation as an async iterable over all its pages. */
  list: <T extends { id: string }>(
    page: (startingAfter: string | undefined) => Answer<Page<T>>,
  ) => PageIterator<T>;
  /** openapi-fetch's per-request options for {@link RequestOptions}. */
  init: (options?: RequestOptions) => { headers?: Record<string, string>; signal?: AbortSignal };
  /** A plain fetch through the retries (hosted pages: no token). */
  fetch: (request: Request) => Promise<Response>;
  baseUrl: string;
}

const env = (name: string): string | undefined => process.env[name] || undefined;

/**
 * A client of the partner API: `const client = createClient({ clientId, clientSecret })`, then
 * `client.customers.create(…)`, `for await (const loan of client.loans.list())`, …
 */
export function createClient(options: ClientOptions = {}) {
  const baseUrl = (
    options.baseUrl ??
    env('EMBEDDED_CREDIT_API_URL') ??
    'http://localhost:3000'
  ).replace(/\/+$/, '');
  const clientId = options.clientId ?? env('EMBEDDED_CREDIT_CLIENT_ID');
  const clientSecret = options.clientSecret ?? env('EMBEDDED_CREDIT_CLIENT_SECRET');
  if (!clientId || !clientSecret)
    throw new Error(
      'createClient: give clientId and clientSecret (or set EMBEDDED_CREDIT_CLIENT_ID and EMBEDDED_CREDIT_CLIENT_SECRET)',
    );
  const baseFetch = options.fetch ?? ((request: Request) => fetch(request));
  const retrying = retryingFetch({
    fetch: baseFetch,
    retry: { ...defaultRetryPolicy, ...options.retry },
    sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    random: options.random ?? Math.random,
    idempotencyKey: randomUUID,
  });
  const tokens = new ClientCredentialsTokens({
    clientId,
    clientSecret,
    baseUrl,
    fetch: retrying,
    now: options.now ?? Date.now,
    renewBeforeMs: options.tokenRenewBeforeMs ?? 60_000,
  });
  const authenticated = authenticatedFetch(retrying, tokens);
  const api = createFetchClient<paths>({
    baseUrl,
    // The key is set once, before the token and the retries copy the request.
    fetch: (request) => authenticated(withIdempotencyKey(request, randomUUID)),
  });

  const core: Core = {
    api,
    baseUrl,
    fetch: retrying,
    async call<T>(answer: Answer<T>): Promise<T> {
      const { data, error, response } = await answer;
      if (!response.ok)
        throw new ApiError(
          response.status,
          error,
          response.headers.get('x-request-id') ?? undefined,
        );
      return data as T;
    },
    list<T extends { id: string }>(page: (startingAfter: string | undefined) => Answer<Page<T>>) {
      return new PageIterator<T>((startingAfter) => core.call(page(startingAfter)));
    },
    init(requestOptions: RequestOptions = {}) {
      return {
        ...(requestOptions.idempotencyKey
          ? { headers: { 'Idempotency-Key': requestOptions.idempotencyKey } }
          : {}),
        ...(requestOptions.signal ? { signal: requestOptions.signal } : {}),
      };
    },
  };
  return {
    ...resources(core),
    /** The typed openapi-fetch client itself, for anything the resources do not wrap. */
    api,
    /** A bearer token (cached), for a request of your own. */
    token: () => tokens.token(),
  };
}

export type EmbeddedCreditClient = ReturnType<typeof createClient>;
