import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { maskTaxId } from './domain/masking.js';

export type { Logger };

const secretFields = [
  'client_secret',
  'clientSecret',
  'access_token',
  'accessToken',
  'secret',
  'password',
  'token',
];
const taxIdFields = ['cpf', 'cnpj'];
// pino's wildcards match one level, so each field is listed at the depths log objects reach.
const atAnyDepth = (field: string) => [field, `*.${field}`, `*.*.${field}`, `*.*.*.${field}`];

/**
 * Structured JSON logs (stdout unless a destination is given). Secrets and tokens never reach a
 * log line, and CPF/CNPJ appear only masked (`***.456.789-**`), wherever in the object they sit.
 */
export function createLogger(
  level: string,
  name = 'embedded-credit',
  destination?: DestinationStream,
): Logger {
  const options: LoggerOptions = {
    name,
    level,
    serializers: { err: serializeError },
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        '*.headers.authorization',
        ...secretFields.flatMap(atAnyDepth),
        ...taxIdFields.flatMap(atAnyDepth),
      ],
      censor: (value: unknown, path: string[]) =>
        taxIdFields.includes(path.at(-1) ?? '') ? maskTaxId(value) : '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Errors as plain data — name, message, code, stack and the cause chain — so that errors from
 * drivers, which can be circular, always log.
 */
export function serializeError(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    message: error.message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    stack: error.stack,
    ...(error.cause !== undefined && depth < 5
      ? { cause: serializeError(error.cause, depth + 1) }
      : {}),
  };
}
