import type { RouterMiddleware } from '@koa/router';
import type { z } from 'zod';
import { problems, type FieldError } from '../errors.js';
import type { AppContext, AppState } from './context.js';

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
  // The handler ends the chain: nothing downstream of a matched route should run.
  return async (ctx) => {
    const errors: FieldError[] = [];
    const input: Record<string, unknown> = {};
    const sources: Record<string, unknown> = {
      params: ctx.params,
      query: ctx.query,
      body: (ctx.request as { body?: unknown }).body ?? {},
    };
    for (const location of ['params', 'query', 'body'] as const) {
      const schema = schemas[location];
      if (!schema) continue;
      const result = schema.safeParse(sources[location]);
      if (result.success) input[location] = result.data;
      else errors.push(...result.error.issues.flatMap((issue) => toFieldErrors(location, issue)));
    }
    if (errors.length > 0) throw problems.validation(errors);
    await handler(ctx, input as Infer<S>);
  };
}

function toFieldErrors(location: string, issue: z.core.$ZodIssue): FieldError[] {
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
  return [{ path, code: issue.code === 'custom' ? 'invalid' : issue.code, message: issue.message }];
}
