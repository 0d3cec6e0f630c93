import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import ipaddr from 'ipaddr.js';
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
  /** WEBHOOK_ALLOW_LOOPBACK_HTTP: plain http to this machine's loopback (development). */
  allowLoopbackHttp?: boolean;
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
  const plainLoopback = url.protocol === 'http:' && input.allowLoopbackHttp === true;
  if (url.protocol !== 'https:' && !plainLoopback)
    return result({ status: null, retryAfter: null, error: 'only https:// is delivered to' });
  const refused = plainLoopback
    ? checkLoopbackHost(url)
    : (checkUrlTarget(url, { allowPrivate: input.allowPrivate }) ??
      checkPort(url, {
        allowPrivate: input.allowPrivate,
        allowedPorts: input.allowedPorts ?? [443],
      }));
  if (refused)
    return result({ status: null, retryAfter: null, error: `forbidden target: ${refused}` });

  const agent = plainLoopback
    ? undefined
    : new Agent({
        lookup: guardedLookup({ allowPrivate: input.allowPrivate }),
        ...(input.ca ? { ca: input.ca } : {}),
        keepAlive: false,
      });
  const timeoutMs = input.timeoutMs ?? RECEIVER_TIMEOUT_MS;
  try {
    return await new Promise<SendResult>((resolve) => {
      const send = (
        options: Parameters<typeof httpsRequest>[1],
        done: (res: IncomingMessage) => void,
      ): ClientRequest =>
        plainLoopback
          ? // `localhost` is sent to 127.0.0.1: no name is resolved for a plain-http target.
            httpRequest(
              url,
              { ...options, ...(url.hostname === 'localhost' ? { hostname: '127.0.0.1' } : {}) },
              done,
            )
          : httpsRequest(url, { ...options, agent }, done);
      const req = send(
        {
          method: 'POST',
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
    agent?.destroy();
  }
}

/** A plain-http target must be this machine: `localhost`, 127.0.0.0/8 or ::1, nothing resolved. */
function checkLoopbackHost(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return undefined;
  return ipaddr.isValid(host) && ipaddr.parse(host).range() === 'loopback'
    ? undefined
    : 'plain http goes to this machine only (localhost, 127.0.0.1, [::1])';
}
