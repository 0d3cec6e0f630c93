import type { Environment } from '../../src/db/schema/index.js';
import { OPS_TOKEN, type TestStack } from './stack.js';

export interface IssuedCredential {
  client_id: string;
  client_secret: string;
}

export interface TestPartner {
  partner_id: string;
  credentials: Record<Environment, IssuedCredential>;
}

/** A partner created the way ops creates one: through the ops API. */
export async function createPartner(stack: TestStack, name = 'Test Partner'): Promise<TestPartner> {
  const response = await fetch(`${stack.baseUrl}/ops/v1/partners`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${OPS_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (response.status !== 201)
    throw new Error(`partner creation answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as TestPartner;
}

/** A bearer token from the token endpoint (JSON encoding). */
export async function tokenFor(stack: TestStack, credential: IssuedCredential): Promise<string> {
  const response = await fetch(`${stack.baseUrl}/v3/auth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: credential.client_id,
      client_secret: credential.client_secret,
    }),
  });
  if (response.status !== 200)
    throw new Error(`token exchange answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** fetch against the stack with a bearer token, and JSON or multipart bodies. */
export function client(stack: TestStack, token: string) {
  return (
    path: string,
    init: {
      method?: string;
      body?: unknown;
      form?: FormData;
      headers?: Record<string, string>;
    } = {},
  ) =>
    fetch(`${stack.baseUrl}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        Authorization: `Bearer ${token}`,
        ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...init.headers,
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      ...(init.form !== undefined ? { body: init.form } : {}),
    });
}

export type Client = ReturnType<typeof client>;

/** A response's JSON body, once its status is the one expected (else what it said, thrown). */
export async function json<T>(response: Promise<Response> | Response, status = 200): Promise<T> {
  const answer = await response;
  if (answer.status !== status)
    throw new Error(`${answer.url}: ${answer.status} ${await answer.text()}`);
  return (await answer.json()) as T;
}
