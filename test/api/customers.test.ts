import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeCnpj, fakeCpf, registerCustomer, type CustomerBody } from '../helpers/customers.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
let api: Client;
let otherPartner: Client;

beforeAll(async () => {
  stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1h' } });
  api = client(stack, await tokenFor(stack, (await createPartner(stack)).credentials.sandbox));
  otherPartner = client(
    stack,
    await tokenFor(stack, (await createPartner(stack, 'Other')).credentials.sandbox),
  );
});
afterAll(async () => {
  await stack?.stop();
});

const register = (body: Record<string, unknown>) => api('/v3/customers', { method: 'POST', body });
const valid = () => ({
  cpf: fakeCpf(),
  name: 'João Souza',
  email: 'joao@example.com',
  phone: '+5521987654321',
});

describe('POST /v3/customers', () => {
  it('accepts punctuation and the alphanumeric CNPJ, storing digits and uppercase', async () => {
    const cpf = fakeCpf();
    const formatted = `${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}`;
    const response = await register({
      ...valid(),
      cpf: formatted,
      cnpj: '12.abc.345/01de-35',
      trading_name: 'Loja da Maria',
    });
    expect(response.status).toBe(201);
    const customer = (await response.json()) as CustomerBody;
    expect(customer).toMatchObject({ cpf, cnpj: '12ABC34501DE35', status: 'pending_kyc' });
    expect(customer.id).toMatch(/^cust_[0-9a-f]{32}$/);
    expect(customer.kyc.map((item) => item.type)).toContain('ccmei');
    expect(response.headers.get('location')).toBe(`/v3/customers/${customer.id}`);
  });

  it('reports every invalid field at once and registers nothing', async () => {
    const response = await register({
      cpf: '123.456.789-00',
      cnpj: '12ABC34501DE36',
      name: '',
      email: 'not-an-email',
      phone: '11987654321',
      external_id: 'x'.repeat(256),
      nickname: 'Mari',
    });
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { errors: { path: string; code: string }[] };
    expect(problem.errors.map((e) => e.path).sort()).toEqual(
      [
        'body.cnpj',
        'body.cpf',
        'body.email',
        'body.external_id',
        'body.name',
        'body.nickname',
        'body.phone',
      ].sort(),
    );
    const list = (await (await api('/v3/customers?limit=100')).json()) as { data: CustomerBody[] };
    expect(list.data.some((c) => c.name === '')).toBe(false);
  });

  it('refuses a CPF with wrong check digits and one of repeated digits', async () => {
    for (const cpf of ['52998224724', '11111111111', '5299822472']) {
      const response = await register({ ...valid(), cpf });
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({ errors: [{ path: 'body.cpf' }] });
    }
  });

  it('answers the same identity and external_id with 200 and the existing customer; another external_id with 409', async () => {
    const body = { ...valid(), cnpj: fakeCnpj(), external_id: 'ref-42' };
    const first = (await (await register(body)).json()) as CustomerBody;
    const again = await register({ ...body, name: 'Renamed' });
    expect(again.status).toBe(200);
    expect(((await again.json()) as CustomerBody).id).toBe(first.id);

    const conflict = await register({ ...body, external_id: 'ref-43' });
    expect(conflict.status).toBe(409);
    expect(await conflict.json()).toMatchObject({ code: 'customer_already_exists' });

    // The same cpf without the cnpj is another identity; another partner may register the person too.
    expect((await register({ ...body, cnpj: null, external_id: 'ref-44' })).status).toBe(201);
    expect((await otherPartner('/v3/customers', { method: 'POST', body })).status).toBe(201);
  });

  it('settles racing registrations of one identity: one is created, the others match or conflict', async () => {
    const body = { ...valid(), external_id: 'race-a' };
    const same = await Promise.all(Array.from({ length: 5 }, () => register(body)));
    expect(same.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
    const ids = await Promise.all(same.map(async (r) => ((await r.json()) as CustomerBody).id));
    expect(new Set(ids).size).toBe(1);

    const fresh = { ...valid() };
    const mixed = await Promise.all([
      register({ ...fresh, external_id: 'one' }),
      register({ ...fresh, external_id: 'two' }),
    ]);
    expect(mixed.map((r) => r.status).sort()).toEqual([201, 409]);
  });
});

describe('PATCH /v3/customers/{id}', () => {
  it('changes data, and refuses cpf, external_id and an empty body', async () => {
    const customer = await registerCustomer(api);
    const changed = await api(`/v3/customers/${customer.id}`, {
      method: 'PATCH',
      body: { email: 'novo@example.com', phone: '+5511912345678' },
    });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({
      email: 'novo@example.com',
      phone: '+5511912345678',
    });

    for (const [body, path] of [
      [{ cpf: fakeCpf() }, 'body.cpf'],
      [{ external_id: 'new' }, 'body.external_id'],
      [{ phone: '123' }, 'body.phone'],
      [{}, 'body'],
    ] as const) {
      const response = await api(`/v3/customers/${customer.id}`, { method: 'PATCH', body });
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({ errors: [{ path }] });
    }
    expect(((await (await api(`/v3/customers/${customer.id}`)).json()) as CustomerBody).email).toBe(
      'novo@example.com',
    );
  });

  it('resubmits a field in pending_correction, and adding a cnpj adds the CCMEI item', async () => {
    const customer = await registerCustomer(api);
    const review = await api(`/v3/sandbox/customers/${customer.id}/review`, {
      method: 'POST',
      body: { items: [{ type: 'email', decision: 'request_correction', message: 'Typo?' }] },
    });
    expect(review.status).toBe(200);
    expect(((await review.json()) as CustomerBody).kyc.at(-1)).toMatchObject({
      kind: 'data',
      type: 'email',
      status: 'pending_correction',
      message: 'Typo?',
    });
    const corrected = (await (
      await api(`/v3/customers/${customer.id}`, {
        method: 'PATCH',
        body: { email: 'fixed@example.com', cnpj: fakeCnpj() },
      })
    ).json()) as CustomerBody;
    expect(corrected.kyc.find((i) => i.type === 'email')?.status).toBe('submitted');
    expect(corrected.kyc.find((i) => i.type === 'ccmei')?.status).toBe('pending');
  });

  it('two customers given one identity at once: one takes it, the other is 409, never a 500', async () => {
    // The API checks the identity first; two PATCHes that race past that check meet the unique
    // index in their workflows' activities, and the refusal crosses the activity to the API.
    const cpf = fakeCpf({ notStartingWith9: true });
    const individual = await registerCustomer(api, { cpf });
    const company = await registerCustomer(api, { cpf, cnpj: fakeCnpj() });
    for (let round = 0; round < 5; round++) {
      const cnpj = fakeCnpj();
      const answers = await Promise.all(
        [individual, company].map((customer) =>
          api(`/v3/customers/${customer.id}`, { method: 'PATCH', body: { cnpj } }),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([200, 409]);
      const refused = answers.find((answer) => answer.status === 409)!;
      expect(await refused.json()).toMatchObject({ code: 'customer_already_exists' });
      // The loser keeps its identity: nothing of the refused change was written.
      const [a, b] = await Promise.all(
        [individual, company].map(
          async (customer) =>
            (await (await api(`/v3/customers/${customer.id}`)).json()) as CustomerBody,
        ),
      );
      expect([a!.cnpj, b!.cnpj].filter((value) => value === cnpj)).toHaveLength(1);
      // Next round, the winner moves on: both start from distinct identities again.
      const winner = a!.cnpj === cnpj ? individual : company;
      expect(
        (await api(`/v3/customers/${winner.id}`, { method: 'PATCH', body: { cnpj: fakeCnpj() } }))
          .status,
      ).toBe(200);
    }
  });

  it('refuses changes to a denied customer with 409 invalid_state', async () => {
    const customer = await registerCustomer(api);
    const denied = await api(`/v3/sandbox/customers/${customer.id}/deny`, {
      method: 'POST',
      body: { reason: 'Closed company.' },
    });
    expect(denied.status).toBe(200);
    expect(await denied.json()).toMatchObject({ status: 'denied' });
    const patch = await api(`/v3/customers/${customer.id}`, {
      method: 'PATCH',
      body: { name: 'Someone' },
    });
    expect(patch.status).toBe(409);
    expect(await patch.json()).toMatchObject({ code: 'invalid_state' });
    const twice = await api(`/v3/sandbox/customers/${customer.id}/deny`, {
      method: 'POST',
      body: { reason: 'Again.' },
    });
    expect(twice.status).toBe(409);
  });
});

describe('GET /v3/customers', () => {
  it('filters by external_id, cpf and status, and sorts by name', async () => {
    const a = await registerCustomer(api, { name: 'Ana Zeta', external_id: 'filter-a' });
    const b = await registerCustomer(api, { name: 'Bruno Alfa', external_id: 'filter-b' });
    await api(`/v3/sandbox/customers/${b.id}/deny`, { method: 'POST', body: { reason: 'Test.' } });

    const byExternal = (await (await api('/v3/customers?external_id=filter-a')).json()) as {
      data: CustomerBody[];
    };
    expect(byExternal.data.map((c) => c.id)).toEqual([a.id]);
    const formattedCpf = `${b.cpf.slice(0, 3)}.${b.cpf.slice(3, 6)}.${b.cpf.slice(6, 9)}-${b.cpf.slice(9)}`;
    const byCpf = (await (await api(`/v3/customers?cpf=${formattedCpf}`)).json()) as {
      data: CustomerBody[];
    };
    expect(byCpf.data.map((c) => c.id)).toEqual([b.id]);
    const denied = await eventually(async () => {
      const page = (await (await api('/v3/customers?status=denied&limit=100')).json()) as {
        data: CustomerBody[];
      };
      return page.data.some((c) => c.id === b.id) ? page : undefined;
    }, 'the denied customer in the status filter');
    expect(denied.data.every((c) => c.status === 'denied')).toBe(true);

    const byName = (await (await api('/v3/customers?sort=name&order=asc&limit=100')).json()) as {
      data: CustomerBody[];
    };
    const names = byName.data.map((c) => c.name);
    expect(names).toEqual([...names].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
    expect((await api('/v3/customers?status=approved')).status).toBe(422);
    expect((await api('/v3/customers?cpf=123')).status).toBe(422);
  });
});
