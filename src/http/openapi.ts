import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiContentObject,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
} from 'zod-openapi';
import {
  errorCatalogue,
  fieldErrorCatalogue,
  type ErrorCode,
  type FieldErrorCode,
} from '../errors.js';
import type { OperationExample } from './examples/examples.js';
import { API_VERSION } from './middleware/request-context.js';
import type { DocumentedOperation, Security } from './api-router.js';
import { TEXT_PATTERN } from './text.js';

const problemMembers = {
  type: z.url().meta({ description: 'Link to the description of this error code.' }),
  title: z.string().meta({
    description: 'The kind of problem, for a person (the same for every problem of a code).',
  }),
  status: z.int().meta({ description: 'The HTTP status, repeated.' }),
  detail: z.string().meta({ description: 'What went wrong this time, for a person.' }),
  code: z.enum(Object.keys(errorCatalogue) as [ErrorCode, ...ErrorCode[]]).meta({
    description: 'What went wrong, stable: branch on it (`/docs/errors` lists every code).',
  }),
};

export const problemSchema = z
  .object(problemMembers)
  .meta({ id: 'Problem', description: 'An RFC 9457 problem.' });

export const validationProblemSchema = z
  .object({
    ...problemMembers,
    status: z.literal(422).meta({ description: 'The HTTP status, repeated.' }),
    code: z
      .literal('validation_error')
      .meta({ description: 'Invalid fields: `errors[]` names each.' }),
    errors: z
      .array(
        z
          .object({
            path: z
              .string()
              .meta({ description: 'Where: `body.email`, `query.limit`, `header.…`.' }),
            code: z
              .enum(Object.keys(fieldErrorCatalogue) as [FieldErrorCode, ...FieldErrorCode[]])
              .meta({
                description:
                  'What kind of problem, one name per kind: the catalogue is at `/docs/errors#field-codes`.',
              }),
            message: z
              .string()
              .meta({ description: 'What to fix, for a person: the bounds, the format.' }),
          })
          .meta({ id: 'FieldError' }),
      )
      .min(1)
      .meta({ description: 'One entry per invalid field.' }),
  })
  .meta({ id: 'ValidationProblem', description: 'An RFC 9457 problem naming each invalid field.' });

/** What a field of this name means on any record (a field's own description wins). */
const glossary: Record<string, string> = {
  created_at: 'When it was created (UTC).',
  updated_at: 'When it last changed (UTC).',
  currency: 'Always `BRL`: every amount is an integer number of centavos.',
};

const problemContent = (schema: z.ZodType) => ({ 'application/problem+json': { schema } });

const standardErrors: Record<Security, number[]> = {
  partner: [401, 429, 500, 503],
  ops: [401, 500, 503],
  psp: [401, 500, 503],
  none: [500, 503],
};

const statusText: Record<number, string> = {
  400: 'Bad request (unparseable body or unknown cursor).',
  401: 'Missing, invalid, expired or revoked credentials.',
  403: 'The operator holds none of the roles this command needs.',
  404: 'No such record for this partner and environment.',
  409: 'The record or the idempotency key is in a state that forbids this.',
  410: 'The record was erased (LGPD art. 18).',
  413: 'Body too large.',
  415: 'Unsupported media type.',
  422: 'Invalid fields; `errors[]` lists each.',
  429: 'Rate limited; see `Retry-After`.',
  500: 'Unexpected error.',
  502: 'A counterparty refused the request (the lender’s PSP: `psp_refused`); nothing was written.',
  503: 'A dependency is unreachable; see `Retry-After`.',
};

const idempotencyHeader = z.object({
  'Idempotency-Key': z
    .string()
    .regex(/^[\x20-\x7e]{1,255}$/)
    .optional()
    .meta({ description: 'Makes a retry safe: the first response is replayed for 24 hours.' }),
});

function requestContent(spec: DocumentedOperation['spec']): ZodOpenApiContentObject {
  const schema = spec.bodyDocumentation ?? spec.body;
  switch (spec.bodyType ?? 'json') {
    case 'form-or-json':
      return { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } };
    case 'multipart':
      return {
        'multipart/form-data': {
          schema,
          ...(spec.bodyEncoding ? { encoding: spec.bodyEncoding } : {}),
        },
      };
    default:
      // `signed-json` too: JSON on the wire, read as bytes to check their signature.
      return { 'application/json': { schema } };
  }
}

/** The JSON request body's content with the operation's recorded example (a form keeps none). */
function withExample(content: ZodOpenApiContentObject, example: unknown): ZodOpenApiContentObject {
  const json = content['application/json'];
  if (example === undefined || !json) return content;
  return { ...content, 'application/json': { ...json, example } };
}

export interface DocumentInfo {
  title: string;
  description: string;
  /** Each operation's example from a real run, by operation id (src/http/examples). */
  examples?: Record<string, OperationExample>;
  /** OpenAPI 3.1 `webhooks`: what the service POSTs to the partner, by name. */
  webhooks?: Record<
    string,
    { summary: string; description: string; body: z.ZodType | { $ref: string } }
  >;
  serverUrl: string;
  securitySchemes: Partial<
    Record<
      Security,
      | { type: 'http'; scheme: 'bearer' | 'basic'; description: string }
      | { type: 'apiKey'; in: 'header'; name: string; description: string }
    >
  >;
}

/** The OpenAPI 3.1 document of a set of operations, from the zod schemas that validate them. */
export function buildOpenApiDocument(info: DocumentInfo, operations: DocumentedOperation[]) {
  const paths: ZodOpenApiPathsObject = {};
  for (const { spec, path } of operations) {
    const example = info.examples?.[spec.operationId];
    const responses: Record<string, ZodOpenApiResponseObject> = {};
    for (const [status, response] of Object.entries(spec.responses)) {
      const answered =
        example?.status === Number(status) && example.response !== undefined
          ? { example: example.response }
          : {};
      responses[status] = {
        description: response.description,
        ...(response.schema
          ? {
              content: Object.fromEntries(
                [response.contentType ?? 'application/json']
                  .flat()
                  .map((type) => [
                    type,
                    { schema: response.schema, ...(type === 'application/json' ? answered : {}) },
                  ]),
              ),
            }
          : {}),
        ...(response.headers
          ? {
              headers: z.object(
                Object.fromEntries(
                  Object.entries(response.headers).map(([name, description]) => [
                    name,
                    z.string().meta({ description }),
                  ]),
                ),
              ),
            }
          : {}),
      };
    }
    const errorStatuses = new Set([
      ...standardErrors[spec.security],
      ...(spec.body ? [400, 413, 415, 422] : []),
      ...(spec.query ? [422] : []),
      ...(spec.idempotent ? [409, 422] : []),
      ...(spec.roles ? [403] : []),
      ...(spec.errors ?? []),
    ]);
    for (const status of [...errorStatuses].sort()) {
      responses[String(status)] ??= {
        description: statusText[status] ?? 'Error.',
        content: problemContent(
          spec.problems?.[status] ?? (status === 422 ? validationProblemSchema : problemSchema),
        ),
      };
    }

    const operation: ZodOpenApiOperationObject = {
      operationId: spec.operationId,
      summary: spec.summary,
      description:
        (spec.description ?? spec.summary) +
        (spec.roles ? ` Roles: ${spec.roles.map((role) => `\`${role}\``).join(', ')}.` : ''),
      tags: [spec.tag],
      security: spec.security === 'none' ? [] : [{ [spec.security]: [] }],
      requestParams: {
        ...(spec.params ? { path: spec.params as never } : {}),
        ...(spec.query ? { query: spec.query as never } : {}),
        ...(spec.idempotent ? { header: idempotencyHeader } : {}),
      },
      ...(spec.body
        ? {
            requestBody: {
              // Optional when an absent body means something (the empty object is valid), for
              // the validation and for the document alike.
              required: ![spec.body, spec.bodyDocumentation].every(
                (schema) => !schema || schema.safeParse({}).success,
              ),
              content: withExample(requestContent(spec), example?.request),
            },
          }
        : {}),
      responses: responses,
    };
    paths[path] = { ...paths[path], [spec.method]: operation };
  }

  const tags = [...new Set(operations.map(({ spec }) => spec.tag))].map((name) => ({ name }));
  return createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: info.title,
        version: API_VERSION,
        description: info.description,
        contact: { name: 'Embedded credit API support', url: `${info.serverUrl}/docs` },
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: info.serverUrl }],
      tags,
      components: {
        securitySchemes: Object.fromEntries(Object.entries(info.securitySchemes)),
      },
      paths,
      ...(info.webhooks
        ? {
            webhooks: Object.fromEntries(
              Object.entries(info.webhooks).map(([name, hook]) => [
                name,
                {
                  post: {
                    operationId: `webhook.${name}`,
                    summary: hook.summary,
                    description: hook.description,
                    tags: ['Webhooks'],
                    requestBody: {
                      required: true,
                      content: { 'application/json': { schema: hook.body } },
                    },
                    responses: {
                      '2XX': { description: 'Received: any 2xx ends the delivery.' },
                      '410': { description: 'Gone: the endpoint is disabled, no retry.' },
                      default: {
                        description:
                          'Anything else (or no answer within 15 s) is retried on the schedule; 429 and 503 may say when with `Retry-After`.',
                      },
                    },
                  },
                },
              ]),
            ),
          }
        : {}),
    },
    {
      override: ({ jsonSchema, io }) => {
        // Fields that mean the same on every record are described once, here.
        for (const [name, property] of Object.entries(jsonSchema.properties ?? {}))
          if (typeof property === 'object' && !('description' in property) && glossary[name])
            (property as { description?: string }).description = glossary[name];
        // Every free text a request carries: no NUL (see src/http/text.ts).
        const free =
          io === 'input' &&
          jsonSchema.type === 'string' &&
          jsonSchema.pattern === undefined &&
          jsonSchema.format === undefined &&
          jsonSchema.enum === undefined &&
          jsonSchema.const === undefined;
        if (free) jsonSchema.pattern = TEXT_PATTERN;
      },
    },
  );
}
