import { Agent, request } from 'node:https';
import { checkUrlTarget, guardedLookup } from './address-policy.js';

export interface SendResult {
  status: number | null;
  retryAfter: string | null;
  error: string | null;
  durationMs: number;
}

export const RECEIVER_TIMEOUT_MS = 15_000;

/**
 * One delivery attempt: a POST that takes at most 15 s, reads only the status, follows no
 * redirect, and reaches only allowed addresses — an address literal is checked here (Node does
 * not look literals up), a name at the connection through the guarded lookup.
 */
export async function postWebhook(input: {
  url: string;
  headers: Record<string, string>;
  body: string;
  allowPrivate: boolean;
  /** Extra trusted CA certificates (PEM), for receivers on a private PKI. */
  ca?: string;
  timeoutMs?: number;
}): Promise<SendResult> {
  const started = Date.now();
  const result = (partial: Omit<SendResult, 'durationMs'>): SendResult => ({
    ...partial,
    durationMs: Date.now() - started,
  });
  const url = new URL(input.url);
  if (url.protocol !== 'https:')
    return result({ status: null, retryAfter: null, error: 'only https:// is delivered to' });
  const refused = checkUrlTarget(url, { allowPrivate: input.allowPrivate });
  if (refused)
    return result({ status: null, retryAfter: null, error: `forbidden target: ${refused}` });

  const agent = new Agent({
    lookup: guardedLookup({ allowPrivate: input.allowPrivate }),
    ...(input.ca ? { ca: input.ca } : {}),
    keepAlive: false,
  });
  const timeoutMs = input.timeoutMs ?? RECEIVER_TIMEOUT_MS;
  try {
    return await new Promise<SendResult>((resolve) => {
      const req = request(
        url,
        {
          method: 'POST',
          agent,
          headers: {
            ...input.headers,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(input.body),
            'user-agent': 'embedded-credit-webhooks/1',
          },
          signal: AbortSignal.timeout(timeoutMs),
        },
        (res) => {
          res.resume(); // only the status is read
          const retryAfter = res.headers['retry-after'];
          resolve(
            result({
              status: res.statusCode ?? null,
              retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
              error: null,
            }),
          );
        },
      );
      req.on('error', (error: Error) => {
        const message =
          error.name === 'AbortError' || error.name === 'TimeoutError'
            ? `no response in ${timeoutMs / 1000} s`
            : error.message;
        resolve(result({ status: null, retryAfter: null, error: message.slice(0, 500) }));
      });
      req.end(input.body);
    });
  } finally {
    agent.destroy();
  }
}
