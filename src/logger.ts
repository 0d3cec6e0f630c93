import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs on stdout. Secrets never reach a log line: request headers that carry
 * credentials and body fields that hold secrets are redacted wherever they appear.
 */
export function createLogger(level: string, name = 'embedded-credit'): Logger {
  return pino({
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        '*.client_secret',
        '*.access_token',
        '*.password',
        '*.secret',
      ],
      censor: '[redacted]',
    },
  });
}
