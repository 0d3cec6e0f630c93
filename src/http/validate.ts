import type { RouterMiddleware } from '@koa/router';
import type { z } from 'zod';
import { fieldErrorCatalogue, problems, type FieldError, type FieldErrorCode } from '../errors.js';
import type { AppContext, AppState } from './context.js';
import { isValidText } from './text.js';

export interface InputSchemas {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
}

type Infer<S extends InputSchemas> = {
  [K in keyof S]: S[K] extends z.ZodType ? z.output<S[K]> : never;
};

/**
 * Validates params, query and body together and reports every bad field at once; the handler only
 * runs with typed, parsed input. Object schemas should be strict so unknown fields are refused.
 */
export function validated<S extends InputSchemas>(
  schemas: S,
  handler: (ctx: AppContext, input: Infer<S>) => Promise<void>,
): RouterMiddleware<AppState> {
  const locations = (['params', 'query', 'body'] as const).filter((location) => schemas[location]);
  // The handler ends the chain: nothing downstream of a matched route should run.
  if (locations.length === 0) return (ctx) => handler(ctx, {} as Infer<S>);
  return async (ctx) => {
    const errors: FieldError[] = [];
    const input: Record<string, unknown> = {};
    for (const location of locations) {
      const schema = schemas[location]!;
      const source =
        location === 'params'
          ? ctx.params
          : location === 'query'
            ? ctx.query
            : ((ctx.request as { body?: unknown }).body ?? {});
      const result = schema.safeParse(source);
      // Text PostgreSQL would refuse never reaches a handler or a query: looked for in what the
      // schema answers (a member a schema drops, as the PSP's extras are, is never read), or in
      // what was sent when it answers nothing.
      const badText = invalidTextPaths(result.success ? result.data : source, location);
      errors.push(
        ...badText.map((path) => ({
          path,
          code: 'invalid_text' as const,
          message: 'Text must not contain NUL characters or unpaired UTF-16 surrogates.',
        })),
      );
      if (result.success) input[location] = result.data;
      else
        errors.push(
          ...result.error.issues
            .flatMap((issue) => toFieldErrors(location, issue))
            .filter(
              (error) =>
                isValidText(error.path) &&
                !badText.some((bad) => error.path === bad || error.path.startsWith(`${bad}.`)),
            ),
        );
    }
    if (errors.length > 0) throw problems.validation(errors);
    await handler(ctx, input as Infer<S>);
  };
}

/** Paths of every string within a parsed query or body that is not valid text; Buffers are files. */
function invalidTextPaths(value: unknown, path: string): string[] {
  if (typeof value === 'string') return isValidText(value) ? [] : [path];
  if (typeof value !== 'object' || value === null || Buffer.isBuffer(value)) return [];
  return Object.entries(value).flatMap(([key, item]) =>
    // A key is text too: report it under its own (printable) path.
    isValidText(key)
      ? invalidTextPaths(item, `${path}.${key}`)
      : [`${path}.${JSON.stringify(key).slice(1, -1)}`],
  );
}

/** A zod issue as the partner reads it: one of the field codes of `fieldErrorCatalogue`. */
export function toFieldErrors(location: string, issue: z.core.$ZodIssue): FieldError[] {
  const path = [location, ...issue.path.map(String)].join('.');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      path: `${path}.${key}`,
      code: 'unknown_field',
      message: 'This field is not part of the request schema.',
    }));
  }
  if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
    return [{ path, code: 'required', message: 'This field is required.' }];
  }
  return [{ path, code: fieldCodeOf(issue), message: issue.message }];
}

/** One name per kind of problem: a length is `too_long`/`too_short`, a bound `out_of_range`. */
function fieldCodeOf(issue: z.core.$ZodIssue): FieldErrorCode {
  switch (issue.code) {
    case 'too_big':
    case 'too_small': {
      const measured =
        issue.origin === 'string' || issue.origin === 'array' || issue.origin === 'set';
      if (!measured) return 'out_of_range';
      return issue.code === 'too_big' ? 'too_long' : 'too_short';
    }
    case 'invalid_type':
    case 'invalid_format':
    case 'invalid_value':
      return issue.code;
    case 'not_multiple_of':
      return 'invalid_type';
    case 'custom': {
      // A custom check names its code (`params: { code }`), e.g. `forbidden_target`.
      const code = (issue.params as { code?: string } | undefined)?.code;
      return code !== undefined && code in fieldErrorCatalogue
        ? (code as FieldErrorCode)
        : 'invalid_value';
    }
    default:
      // invalid_union, invalid_key, invalid_element: none of the shapes the field takes.
      return 'invalid_value';
  }
}
