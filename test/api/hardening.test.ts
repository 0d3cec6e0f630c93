/**
 * What an outside fuzzer (Schemathesis, `npm run fuzz`) found, asserted as a partner sees it: text
 * PostgreSQL would refuse is a 4xx wherever it is sent, and the OpenAPI document is exactly as
 * strict as the code — what it admits is accepted, what the code refuses it does not admit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventCatalogue } from '../../src/domain/webhooks/catalogue.js';
import { files, registerCustomer, upload } from '../helpers/customers.js';
import {
  client,
  createPartner,
  tokenFor,
  type Client,
  type TestPartner,
} from '../helpers/partners.js';
import { startStack, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
let partner: TestPartner;
let api: Client;

interface Schema {
  $ref?: string;
  type?: string | string[];
  pattern?: string;
  format?: string;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  required?: string[];
  minProperties?: number;
  additionalProperties?: boolean | Schema;
}
interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; schema: Schema }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}
let document: Document;

beforeAll(async () => {
  stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1h' } });
  partner = await createPartner(stack);
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
  document = (await (await fetch(`${stack.baseUrl}/v3/openapi.json`)).json()) as Document;
});
afterAll(async () => {
  await stack?.stop();
});

const resolve = (schema: Schema): Schema =>
  schema.$ref ? document.components.schemas[schema.$ref.split('/').pop()!]! : schema;
const operation = (path: string, method: string) => document.paths[path]![method]!;
const parameter = (path: string, method: string, name: string) =>
  operation(path, method).parameters!.find((p) => p.name === name)!.schema;
const bodySchema = (path: string, method: string, media = 'application/json') =>
  resolve(operation(path, method).requestBody!.content[media]!.schema);
const problemSchema = (path: string, method: string, status: number) =>
  resolve(operation(path, method).responses[status]!.content!['application/problem+json']!.schema);

async function expectFieldErrors(response: Response, expected: string[]) {
  expect(response.status).toBe(422);
  const problem = (await response.json()) as {
    code: string;
    errors: { path: string; code: string }[];
  };
  expect(problem.code).toBe('validation_error');
  expect(problem.errors.map((e) => `${e.path}:${e.code}`).sort()).toEqual([...expected].sort());
}

describe('text PostgreSQL would refuse', () => {
  it('is a 422 in a query, whatever the parameter, and never reaches the database', async () => {
    // The fuzzer's 500: a NUL byte in a cursor reached PostgreSQL.
    await expectFieldErrors(await api('/v3/customers?starting_after=%00%1E'), [
      'query.starting_after:invalid_text',
    ]);
    await expectFieldErrors(await api('/v3/customers?external_id=ref%00-1'), [
      'query.external_id:invalid_text',
    ]);
  });

  it('is a 422 in a JSON body: NUL, and unpaired surrogates', async () => {
    await expectFieldErrors(
      await api('/v3/auth/credentials', { method: 'POST', body: { name: 'reporting\u0000' } }),
      ['body.name:invalid_text'],
    );
    // JSON.stringify spells a lone surrogate as the escape `\ud800`, which JSON.parse turns back.
    await expectFieldErrors(
      await api('/v3/customers', {
        method: 'POST',
        body: {
          cpf: '529.982.247-25',
          name: 'Maria \ud800',
          email: 'maria@example.com',
          phone: '+5511987654321',
          external_id: 'a\u0000',
        },
      }),
      ['body.name:invalid_text', 'body.external_id:invalid_text'],
    );
  });

  it('is a 422 in a multipart field', async () => {
    const customer = await registerCustomer(api);
    await expectFieldErrors(
      await upload(api, customer.id, 'selfie\u0000', { bytes: files.pdf(), name: 'me.pdf' }),
      ['body.type:invalid_text'],
    );
  });

  it('is the resource’s 404 in a path', async () => {
    for (const [path, code] of [
      [`/v3/customers/cust_%00${'0'.repeat(31)}`, 'customer_not_found'],
      ['/v3/customers/%00', 'customer_not_found'],
      [`/v3/webhooks/endpoints/we_${'0'.repeat(31)}%00`, 'webhook_endpoint_not_found'],
      ['/v3/events/%00', 'event_not_found'],
      ['/v3/auth/credentials/cli_%00', 'credential_not_found'],
    ] as const) {
      const response = await api(path);
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(await response.json()).toMatchObject({ code });
    }
  });

  it('is a 401 invalid_client in HTTP Basic credentials', async () => {
    const basic = Buffer.from(`cli_\u0000:secret`).toString('base64');
    const response = await fetch(`${stack.baseUrl}/v3/auth/token`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${basic}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({
      code: 'invalid_client',
      error: 'invalid_client',
    });
  });

  it('is documented: every free-text request string excludes NUL', () => {
    expect(parameter('/v3/customers', 'get', 'external_id').pattern).toBe('^[^\\x00]*$');
    const create = bodySchema('/v3/customers', 'post');
    expect(create.properties!.name!.pattern).toContain('\\x00');
    const upload = bodySchema(
      '/v3/customers/{customer_id}/documents',
      'post',
      'multipart/form-data',
    );
    expect(upload.properties!.file!.format).toBe('binary');
  });
});

describe('cursors', () => {
  it('refuse an empty starting_after or another list’s id as a field (422), on every list', async () => {
    const customer = await registerCustomer(api);
    const endpoint = (await (
      await api('/v3/webhooks/endpoints', {
        method: 'POST',
        body: { url: 'https://hooks.partner.example/cursor' },
      })
    ).json()) as { id: string };
    const lists = [
      '/v3/auth/credentials',
      '/v3/customers',
      `/v3/customers/${customer.id}/documents`,
      `/v3/customers/${customer.id}/credit-offers`,
      '/v3/credit-offers',
      '/v3/events',
      '/v3/webhooks/endpoints',
      `/v3/webhooks/endpoints/${endpoint.id}/deliveries`,
    ];
    for (const list of lists) {
      for (const cursor of ['', `sim_${'0'.repeat(32)}`]) {
        const response = await api(`${list}?starting_after=${cursor}`);
        expect({ list, cursor, status: response.status }).toEqual({ list, cursor, status: 422 });
        expect(await response.json()).toMatchObject({
          errors: [{ path: 'query.starting_after', code: 'invalid_format' }],
        });
      }
    }
  });

  it('of the right shape naming no record stay 400 invalid_cursor', async () => {
    const response = await api(`/v3/customers?starting_after=cust_${'0'.repeat(32)}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'invalid_cursor' });
  });

  it('are documented with the pattern of the list’s ids', () => {
    expect(parameter('/v3/customers', 'get', 'starting_after').pattern).toBe('^cust_[0-9a-f]{32}$');
    expect(parameter('/v3/auth/credentials', 'get', 'starting_after').pattern).toBe(
      '^cred_[0-9a-f]{32}$',
    );
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const p of op.parameters ?? []) {
          if (p.in !== 'path' && p.name !== 'starting_after') continue;
          expect({ path, method, name: p.name, pattern: p.schema.pattern }).toEqual({
            path,
            method,
            name: p.name,
            pattern: expect.stringMatching(/^\^[a-z]+_\[0-9a-f\]\{32\}\$$/) as unknown,
          });
        }
      }
    }
  });
});

describe('the token endpoint’s problems', () => {
  it('carry OAuth’s error, a member of the documented TokenProblem', async () => {
    const documented = (status: number) =>
      Object.keys(problemSchema('/v3/auth/token', 'post', status).properties!);
    expect(documented(400)).toContain('error');
    expect(documented(401)).toContain('error');

    // No body at all: no grant type.
    const bare = await fetch(`${stack.baseUrl}/v3/auth/token`, { method: 'POST' });
    expect(bare.status).toBe(400);
    const unsupported = (await bare.json()) as Record<string, unknown>;
    expect(unsupported).toMatchObject({
      code: 'unsupported_grant_type',
      error: 'unsupported_grant_type',
    });
    expect(documented(400)).toEqual(expect.arrayContaining(Object.keys(unsupported)));

    const wrong = await fetch(`${stack.baseUrl}/v3/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: partner.credentials.sandbox.client_id,
        client_secret: 'sk_wrong',
      }),
    });
    expect(wrong.status).toBe(401);
    const invalid = (await wrong.json()) as Record<string, unknown>;
    expect(invalid).toMatchObject({ code: 'invalid_client', error: 'invalid_client' });
    expect(documented(401)).toEqual(expect.arrayContaining(Object.keys(invalid)));
  });

  it('document the grant type as required and the client id’s shape', () => {
    const body = bodySchema('/v3/auth/token', 'post');
    expect(body.required).toEqual(['grant_type']);
    expect(body.properties!.grant_type!.const).toBe('client_credentials');
    expect(body.properties!.client_id!.pattern).toBe('^cli_[0-9a-f]{32}$');
    expect(operation('/v3/auth/token', 'post').requestBody!.required).toBe(true);
  });
});

describe('problem members', () => {
  it('are all documented: a 422 lists errors in the ValidationProblem', async () => {
    const response = await api('/v3/customers', { method: 'POST', body: {} });
    const problem = (await response.json()) as Record<string, unknown>;
    const documented = problemSchema('/v3/customers', 'post', 422);
    expect(documented.required).toContain('errors');
    expect(Object.keys(documented.properties!)).toEqual(
      expect.arrayContaining(Object.keys(problem)),
    );
    const plain = problemSchema('/v3/customers/{customer_id}', 'get', 404);
    expect(plain.additionalProperties).toBe(false);
    expect(Object.keys(plain.properties!).sort()).toEqual(
      ['code', 'detail', 'status', 'title', 'type'].sort(),
    );
  });
});

describe('request bodies', () => {
  it('are optional where every field is, and the code agrees', async () => {
    expect(operation('/v3/auth/credentials', 'post').requestBody!.required).toBe(false);
    const created = await fetch(`${stack.baseUrl}/v3/auth/credentials`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${await tokenFor(stack, partner.credentials.sandbox)}` },
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ name: null });

    const endpoint = (await (
      await api('/v3/webhooks/endpoints', {
        method: 'POST',
        body: { url: 'https://hooks.partner.example/rotate' },
      })
    ).json()) as { id: string };
    const path = '/v3/webhooks/endpoints/{id}/secret/rotate';
    expect(operation(path, 'post').requestBody!.required).toBe(false);
    const rotated = await api(`/v3/webhooks/endpoints/${endpoint.id}/secret/rotate`, {
      method: 'POST',
    });
    expect(rotated.status).toBe(200);
  });

  it('are required where a field is, and the code agrees', async () => {
    for (const [path, method] of [
      ['/v3/customers', 'post'],
      ['/v3/customers/{customer_id}', 'patch'],
      ['/v3/webhooks/endpoints', 'post'],
      ['/v3/webhooks/endpoints/{id}', 'patch'],
      ['/v3/webhooks/endpoints/{id}/recover', 'post'],
    ] as const) {
      expect({ path, method, required: operation(path, method).requestBody!.required }).toEqual({
        path,
        method,
        required: true,
      });
    }
    expect((await api('/v3/customers', { method: 'POST' })).status).toBe(422);
  });
});

describe('the document admits only what the code accepts', () => {
  it('offers no cpf or external_id to PATCH a customer, and asks for at least one field', () => {
    const patch = bodySchema('/v3/customers/{customer_id}', 'patch');
    expect(Object.keys(patch.properties!).sort()).toEqual(
      ['cnpj', 'email', 'name', 'phone', 'trading_name'].sort(),
    );
    expect(patch.minProperties).toBe(1);
    expect(patch.additionalProperties).toBe(false);
  });

  it('spells out cpf, cnpj and phone, and refuses what does not match', async () => {
    const create = bodySchema('/v3/customers', 'post');
    const field = (name: string) => {
      const schema = create.properties![name]!;
      return schema.anyOf ? schema.anyOf.find((s) => s.type === 'string')! : schema;
    };
    expect(field('cpf').format).toBe('cpf');
    expect(field('cpf').pattern).toBe('^\\d{3}\\.?\\d{3}\\.?\\d{3}-?\\d{2}$');
    expect(field('cnpj').format).toBe('cnpj');
    expect(field('cnpj').pattern).toMatch(/^\^\[0-9A-Za-z\]\{2\}/);
    expect(field('phone')).toMatchObject({ format: 'e164', pattern: '^\\+[1-9]\\d{7,14}$' });
    expect(parameter('/v3/customers', 'get', 'cpf').pattern).toBe(field('cpf').pattern);
    await expectFieldErrors(await api('/v3/customers?cpf=%C3%B6'), ['query.cpf:invalid_format']);
  });

  it('names every event, document type and review item type it takes', async () => {
    const wildcards = [...new Set(eventCatalogue.map((name) => `${name.split('.')[0]}.*`))];
    const endpoint = bodySchema('/v3/webhooks/endpoints', 'post');
    expect(endpoint.properties!.events!.items!.enum!.sort()).toEqual(
      [...eventCatalogue, ...wildcards].sort(),
    );
    expect(parameter('/v3/events', 'get', 'type').enum!.sort()).toEqual([...eventCatalogue].sort());
    await expectFieldErrors(
      await api('/v3/webhooks/endpoints', {
        method: 'POST',
        body: { url: 'https://hooks.partner.example/e', events: [''] },
      }),
      ['body.events.0:invalid_value'],
    );

    const upload = bodySchema(
      '/v3/customers/{customer_id}/documents',
      'post',
      'multipart/form-data',
    );
    expect(upload.properties!.type!.enum!.sort()).toEqual(
      ['biometrics', 'ccmei', 'cnh', 'identity_card_back', 'identity_card_front', 'selfie'].sort(),
    );
    const encoding = (
      operation('/v3/customers/{customer_id}/documents', 'post').requestBody!.content[
        'multipart/form-data'
      ] as { encoding?: Record<string, { contentType: string }> }
    ).encoding;
    expect(encoding).toEqual({
      file: { contentType: 'application/pdf, image/jpeg, image/png' },
    });

    const review = bodySchema('/v3/sandbox/customers/{customer_id}/review', 'post');
    const decisions = resolve(review.properties!.items!.items!);
    const variants = (decisions.oneOf ?? decisions.anyOf)!.map(resolve);
    expect(variants.map((v) => v.properties!.type!.enum!.length).sort((a, b) => a - b)).toEqual([
      4, 10,
    ]);
  });

  it('shows the Idempotency-Key’s characters', () => {
    expect(parameter('/v3/customers', 'post', 'Idempotency-Key').pattern).toBe(
      '^[\\x20-\\x7e]{1,255}$',
    );
  });
});

describe('a KYC change no workflow takes in time', () => {
  it('is 503 service_unavailable with Retry-After, not a 500', async () => {
    // No worker polls this stack's task queue, so the customer's workflow never takes the Update.
    const idle = await startStack({ worker: false });
    try {
      const partner = await createPartner(idle);
      const idleApi = client(idle, await tokenFor(idle, partner.credentials.sandbox));
      const customer = await registerCustomer(idleApi);
      const response = await idleApi(`/v3/customers/${customer.id}`, {
        method: 'PATCH',
        body: { email: 'later@example.com' },
      });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(await response.json()).toMatchObject({ code: 'service_unavailable' });
    } finally {
      await idle.stop();
    }
  });
});
