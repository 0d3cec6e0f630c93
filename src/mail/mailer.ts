import nodemailer from 'nodemailer';
import { maskEmail } from '../domain/masking.js';
import type { Logger } from '../logger.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Extra headers (a reminder's `List-Unsubscribe`). */
  headers?: Record<string, string>;
  /** A Message-ID of the caller's, stable across retries of one message. */
  messageId?: string;
}

export interface Mailer {
  /** Resolves once the SMTP server has accepted the message; else {@link MailUnavailableError}. */
  send(message: MailMessage): Promise<void>;
  /** Closes the pooled connections (a send after it rejects). */
  close(): void;
}

export interface MailerSettings {
  /** smtp:// or smtps:// (credentials in the URL); undefined: every send rejects. */
  smtpUrl: string | undefined;
  /** The From header, e.g. `Embedded Credit <nao-responda@example.com>`. */
  from: string;
  logger: Logger;
}

/**
 * The mail could not be handed to the SMTP server: none is configured, it is unreachable or slow,
 * or it refused the message. The request that needed it answers 503.
 */
export class MailUnavailableError extends Error {
  readonly code = 'MAIL_UNAVAILABLE';
  constructor(reason: string, cause?: unknown) {
    super(`mail unavailable: ${reason}${cause instanceof Error ? `: ${cause.message}` : ''}`, {
      cause,
    });
    this.name = 'MailUnavailableError';
  }
}

/**
 * Each step against the server is bounded, and so is the whole send: an SMTP server that is down
 * or stalls fails the request within its budget instead of holding it (nodemailer's own defaults
 * wait minutes).
 */
const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 10_000;
const SEND_TIMEOUT_MS = 15_000;

/** Outgoing e-mail through SMTP (nodemailer, pooled connections). */
export function createMailer(settings: MailerSettings): Mailer {
  const { smtpUrl, from, logger } = settings;
  if (!smtpUrl) {
    return {
      send: () =>
        Promise.reject(new MailUnavailableError('no SMTP server is configured (set SMTP_URL)')),
      close: () => {},
    };
  }
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    pool: true,
    maxConnections: 2,
    // A connection the server drops mid-message is retried once, not five times.
    maxRequeues: 1,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: GREETING_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    dnsTimeout: CONNECTION_TIMEOUT_MS,
    // What is sent is text the service wrote: never a file or URL nodemailer would read for it.
    disableFileAccess: true,
    disableUrlAccess: true,
  });

  return {
    async send({ to, subject, text, html, headers, messageId }) {
      try {
        const info = await transport.sendMail({
          from,
          to,
          subject,
          text,
          ...(html === undefined ? {} : { html }),
          ...(headers === undefined ? {} : { headers }),
          ...(messageId === undefined ? {} : { messageId }),
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
        });
        logger.info({ to: maskEmail(to), messageId: info.messageId }, 'mail sent');
      } catch (error) {
        logger.warn({ to: maskEmail(to), err: error }, 'mail not sent');
        throw new MailUnavailableError('the SMTP server did not take the message', error);
      }
    },
    close: () => transport.close(),
  };
}
