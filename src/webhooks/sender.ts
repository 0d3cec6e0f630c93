import { Agent, request } from 'node:https';
import {
  checkPort,
  checkUrlTarget,
  ForbiddenTargetError,
  guardedLookup,
} from './address-policy.js';

export interface SendResult {
  status: number | null;
  retryAfter: string | null;
  error: string | null;
  durationMs: number;
}

export const RECEIVER_TIMEOUT_MS = 15_000;

/**
 * One delivery attempt: a POST that takes at most 15 s, reads only the status, follows no
 * redirect, and reaches only allowed addresses and ports — an address literal and the port are
 * checked here (Node does not look literals up), a name at the connection through the guarded
 * lookup. Checked at every attempt, so an endpoint stored before a rule tightened is refused too.
 */
export async function postWebhook(input: {
  url: string;
  headers: Record<string, string>;
  body: string;
  allowPrivate: boolean;
  /** The ports a URL may name (WEBHOOK_ALLOWED_PORTS); 443 alone when not given. */
  allowedPorts?: readonly number[];
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
  const refused =
    checkUrlTarget(url, { allowPrivate: input.allowPrivate }) ??
    checkPort(url, { allowPrivate: input.allowPrivate, allowedPorts: input.allowedPorts ?? [443] });
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
            : error instanceof ForbiddenTargetError
              ? `forbidden target: ${error.message}`
              : error.message;
        resolve(result({ status: null, retryAfter: null, error: message.slice(0, 500) }));
      });
      req.end(input.body);
    });
  } finally {
    agent.destroy();
  }
}
