import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { startStack, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
let api: Client;

beforeAll(async () => {
  stack = await startStack({ worker: false });
  api = client(stack, await tokenFor(stack, (await createPartner(stack)).credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
});

interface EndpointBody {
  id: string;
  url: string;
  events: string[];
  status: string;
  disabled_reason: string | null;
  secret?: string;
}

const create = (body: unknown) => api('/v3/webhooks/endpoints', { method: 'POST', body });

describe('webhook endpoints', () => {
  it('are created with a whsec_ secret shown once, and read back without it', async () => {
    const response = await create({
      url: 'https://hooks.partner.example/a',
      events: ['customer.active', 'loan.*'],
      description: 'CRM',
    });
    expect(response.status).toBe(201);
    const endpoint = (await response.json()) as EndpointBody;
    expect(endpoint).toMatchObject({
      status: 'enabled',
      disabled_reason: null,
      events: ['customer.active', 'loan.*'],
    });
    expect(endpoint.id).toMatch(/^we_[0-9a-f]{32}$/);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(response.headers.get('location')).toBe(`/v3/webhooks/endpoints/${endpoint.id}`);

    const fetched = (await (
      await api(`/v3/webhooks/endpoints/${endpoint.id}`)
    ).json()) as EndpointBody;
    expect(fetched.secret).toBeUndefined();
    const listed = (await (await api('/v3/webhooks/endpoints')).json()) as { data: EndpointBody[] };
    expect(listed.data.find((e) => e.id === endpoint.id)?.secret).toBeUndefined();
  });

  it('take no filter as every event', async () => {
    const endpoint = (await (
      await create({ url: 'https://hooks.partner.example/all' })
    ).json()) as EndpointBody;
    expect(endpoint.events).toEqual([]);
  });

  it('refuse plain HTTP, filters outside the catalogue, and targets the URL shows to be internal', async () => {
    const cases: [unknown, string, string][] = [
      [{ url: 'http://hooks.partner.example/a' }, 'body.url', 'invalid_format'],
      [
        { url: 'https://hooks.partner.example/a', events: ['loan.exploded'] },
        'body.events.0',
        'invalid_value',
      ],
      [
        { url: 'https://hooks.partner.example/a', events: ['accounts.*'] },
        'body.events.0',
        'invalid_value',
      ],
      [{ url: 'https://hooks.partner.example/a', events: [''] }, 'body.events.0', 'invalid_value'],
      [{ url: 'https://127.0.0.1/hook' }, 'body.url', 'forbidden_target'],
      [{ url: 'https://2130706433/hook' }, 'body.url', 'forbidden_target'],
      [{ url: 'https://169.254.169.254/latest' }, 'body.url', 'forbidden_target'],
      [{ url: 'https://[fd00::1]/hook' }, 'body.url', 'forbidden_target'],
      [{ url: 'https://localhost/hook' }, 'body.url', 'forbidden_target'],
    ];
    for (const [body, path, code] of cases) {
      const response = await create(body);
      expect({ body, status: response.status }).toEqual({ body, status: 422 });
      expect(await response.json()).toMatchObject({ errors: [{ path, code }] });
    }
  });

  it('are disabled and re-enabled by PATCH, and changed', async () => {
    const { id } = (await (
      await create({ url: 'https://hooks.partner.example/b' })
    ).json()) as EndpointBody;
    const disabled = (await (
      await api(`/v3/webhooks/endpoints/${id}`, { method: 'PATCH', body: { status: 'disabled' } })
    ).json()) as EndpointBody;
    expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: 'manual' });
    const enabled = (await (
      await api(`/v3/webhooks/endpoints/${id}`, {
        method: 'PATCH',
        body: { status: 'enabled', events: ['customer.*'] },
      })
    ).json()) as EndpointBody;
    expect(enabled).toMatchObject({
      status: 'enabled',
      disabled_reason: null,
      events: ['customer.*'],
    });
    expect(
      (
        await api(`/v3/webhooks/endpoints/${id}`, {
          method: 'PATCH',
          body: { url: 'https://10.0.0.1/x' },
        })
      ).status,
    ).toBe(422);
    expect((await api(`/v3/webhooks/endpoints/${id}`, { method: 'PATCH', body: {} })).status).toBe(
      422,
    );
  });

  it('rotate to a new secret, with an overlap from 0 to 86400 seconds', async () => {
    const created = (await (
      await create({ url: 'https://hooks.partner.example/c' })
    ).json()) as EndpointBody;
    const rotate = (body: unknown) =>
      api(`/v3/webhooks/endpoints/${created.id}/secret/rotate`, { method: 'POST', body });
    const rotated = await rotate({});
    expect(rotated.status).toBe(200);
    const { secret } = (await rotated.json()) as { secret: string };
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(created.secret);
    expect((await rotate({ expire_current_in: 0 })).status).toBe(200);
    expect((await rotate({ expire_current_in: 86_401 })).status).toBe(422);
    expect((await rotate({ expire_current_in: -1 })).status).toBe(422);
  });

  it('concurrent rotations lose no secret: the last two issued are the ones that sign', async () => {
    const created = (await (
      await create({ url: 'https://hooks.partner.example/race' })
    ).json()) as EndpointBody;
    const rotate = async () => {
      const response = await api(`/v3/webhooks/endpoints/${created.id}/secret/rotate`, {
        method: 'POST',
        body: { expire_current_in: 3600 },
      });
      return ((await response.json()) as { secret: string }).secret;
    };
    const issued = await Promise.all([rotate(), rotate(), rotate(), rotate()]);
    const row = await stack.database.db.query.webhookEndpoints.findFirst({
      where: (endpoints, { eq }) => eq(endpoints.id, created.id),
    });
    const open = (sealed: string | null | undefined) =>
      sealed ? stack.webhooks.sealedBox.open(sealed) : undefined;
    const current = open(row?.secretSealed);
    const previous = open(row?.previousSecretSealed);
    // Rotations apply one after another: the current secret is one of those issued, and the
    // previous one is the secret issued just before it — never the original, never a lost one.
    expect(issued).toContain(current);
    expect(issued).toContain(previous);
    expect(previous).not.toBe(current);
    expect(previous).not.toBe(created.secret);
  });

  it('are deleted, then not found', async () => {
    const { id } = (await (
      await create({ url: 'https://hooks.partner.example/d' })
    ).json()) as EndpointBody;
    expect((await api(`/v3/webhooks/endpoints/${id}`, { method: 'DELETE' })).status).toBe(204);
    const gone = await api(`/v3/webhooks/endpoints/${id}`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ code: 'webhook_endpoint_not_found' });
  });
});

interface ValidationProblem {
  errors: { path: string; code: string; message: string }[];
}

describe('webhook endpoint targets', () => {
  it('refuse ports outside WEBHOOK_ALLOWED_PORTS (443 and 8443 by default)', async () => {
    const refused = await create({ url: 'https://hooks.partner.example:22/a' });
    expect(refused.status).toBe(422);
    const problem = (await refused.json()) as ValidationProblem;
    expect(problem).toMatchObject({ errors: [{ path: 'body.url', code: 'forbidden_target' }] });
    expect(problem.errors[0]?.message).toBe(
      'Webhooks go to port 443 or 8443 only (no port means 443).',
    );
    // The document says so too: its pattern takes these ports and no other.
    const document = (await (await fetch(`${stack.baseUrl}/v3/openapi.json`)).json()) as {
      components: { schemas: Record<string, { properties: { url: { pattern: string } } }> };
    };
    const pattern = new RegExp(
      document.components.schemas.CreateWebhookEndpointRequest!.properties.url.pattern,
    );
    expect(pattern.test('https://hooks.partner.example:8443/a')).toBe(true);
    expect(pattern.test('https://hooks.partner.example/a')).toBe(true);
    expect(pattern.test('https://hooks.partner.example:22/a')).toBe(false);
    expect((await create({ url: 'https://hooks.partner.example:8443/a' })).status).toBe(201);
    const { id } = (await (
      await create({ url: 'https://hooks.partner.example:443/a' })
    ).json()) as EndpointBody;
    const patched = await api(`/v3/webhooks/endpoints/${id}`, {
      method: 'PATCH',
      body: { url: 'https://hooks.partner.example:6379/a' },
    });
    expect(patched.status).toBe(422);
    expect(await patched.json()).toMatchObject({
      errors: [{ path: 'body.url', code: 'forbidden_target' }],
    });
  });

  it('refuse IPv6 literals outside global unicast', async () => {
    for (const url of [
      'https://[::7f00:1]/',
      'https://[fec0::1]/',
      'https://[64:ff9b:1::a00:1]/',
      'https://example.com:22/',
    ]) {
      const response = await create({ url });
      expect({ url, status: response.status }).toEqual({ url, status: 422 });
      expect(await response.json()).toMatchObject({
        errors: [{ path: 'body.url', code: 'forbidden_target' }],
      });
    }
  });
});

describe('webhook endpoint targets with WEBHOOK_ALLOW_PRIVATE_TARGETS (development)', () => {
  let devStack: TestStack;
  let devApi: Client;
  beforeAll(async () => {
    devStack = await startStack({ worker: false, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    devApi = client(
      devStack,
      await tokenFor(devStack, (await createPartner(devStack)).credentials.sandbox),
    );
  });
  afterAll(async () => {
    await devStack?.stop();
  });
  const devCreate = (url: string) =>
    devApi('/v3/webhooks/endpoints', { method: 'POST', body: { url } });

  it('still refuse literals that are neither public nor loopback/private, without naming them', async () => {
    for (const [url, address] of [
      ['https://[::7f00:1]/', '7f00'],
      ['https://[::127.0.0.1]/', '7f00'],
      ['https://[fec0::1]/', 'fec0'],
      ['https://[64:ff9b:1::a00:1]/', '64:ff9b'],
      ['https://[fe80::1]/', 'fe80'],
      ['https://169.254.169.254/latest', '169.254'],
      ['https://[::ffff:169.254.169.254]/', 'a9fe'],
    ] as const) {
      const response = await devCreate(url);
      expect({ url, status: response.status }).toEqual({ url, status: 422 });
      const problem = (await response.json()) as ValidationProblem;
      expect(problem).toMatchObject({ errors: [{ path: 'body.url', code: 'forbidden_target' }] });
      expect(problem.errors[0]?.message).toContain("the URL's host is not a public address");
      expect(problem.errors[0]?.message).not.toContain(address);
    }
  });

  it('allow loopback, private addresses and any port', async () => {
    for (const url of [
      'https://127.0.0.1:9999/hook',
      'https://[::1]:22/hook',
      'https://10.0.0.5/hook',
      'https://[fd00::1]/hook',
      'https://hooks.partner.example:22/hook',
    ]) {
      const response = await devCreate(url);
      expect({ url, status: response.status }).toEqual({ url, status: 201 });
    }
  });
});
