import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/devstack/free-port.js';
import { createOperator as createTestOperator, type TestOperator } from '../helpers/operators.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

let stack: TestStack;

beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(async () => {
  await stack?.stop();
});

const ops = (token: string, path: string, init: { method?: string; body?: unknown } = {}) =>
  fetch(`${stack.baseUrl}/ops/v1${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });

const createOperator = (roles: string[], by?: string) => createTestOperator(stack, roles, by);

const unknownLoan = `ln_${'0'.repeat(32)}`;
const unknownCustomer = `cust_${'0'.repeat(32)}`;

describe('named operators', () => {
  it('are created by an administrator with roles and a token of their own, shown once', async () => {
    const admin = await createOperator(['admin']);
    expect(admin.operator).toMatchObject({
      roles: ['admin'],
      status: 'active',
      created_by: 'break_glass',
    });
    expect(admin.token).toMatch(/^opk_/);
    // The new administrator creates the next operator, named as its creator.
    const payer = await createOperator(['payments'], admin.token);
    expect(payer.operator.created_by).toBe(admin.operator.id);
    const read = (await (
      await ops(admin.token, `/operators/${payer.operator.id}`)
    ).json()) as Record<string, unknown>;
    expect(read).toMatchObject({ id: payer.operator.id, roles: ['payments'] });
    expect(JSON.stringify(read)).not.toContain(payer.token);
  });

  it('refuses each role outside its commands (403), lets it through to its own', async () => {
    const reviewer = await createOperator(['kyc_reviewer']);
    const payer = await createOperator(['payments']);
    const disburser = await createOperator(['disbursement']);
    const refused = [
      [payer.token, '/partners', { name: 'A partner' }],
      [payer.token, `/customers/${unknownCustomer}/review`, { items: [] }],
      [payer.token, `/loans/${unknownLoan}/disbursement`, { outcome: 'confirmed' }],
      [reviewer.token, `/loans/${unknownLoan}/payments`, { amount: 100, reference: 'r1' }],
      [reviewer.token, '/operators', { name: 'X', email: 'x@lender.example', roles: ['admin'] }],
      [disburser.token, `/loans/${unknownLoan}/payoff`, { reference: 'r2' }],
    ] as const;
    for (const [token, path, body] of refused) {
      const response = await ops(token, path, { body });
      expect(response.status, path).toBe(403);
      expect(await response.json()).toMatchObject({ code: 'operator_role_required' });
    }
    expect((await ops(reviewer.token, '/audit')).status).toBe(403);
    // Their own commands pass the role check and meet the record's 404.
    const allowed = [
      [reviewer.token, `/customers/${unknownCustomer}/deny`, { reason: 'Fraud suspected' }],
      [payer.token, `/loans/${unknownLoan}/payments`, { amount: 100, reference: 'r3' }],
      [disburser.token, `/loans/${unknownLoan}/disbursement/claim`, undefined],
    ] as const;
    for (const [token, path, body] of allowed)
      expect((await ops(token, path, { body: body ?? {} })).status, path).toBe(404);
    // Reads of the books are open to every operator.
    expect((await ops(reviewer.token, '/ledger/trial-balance')).status).not.toBe(403);
  });

  it('are audited: every command with its actor, time and outcome, refusals included', async () => {
    const payer = await createOperator(['payments']);
    await ops(payer.token, '/partners', { body: { name: 'Not mine to create' } });
    await ops(payer.token, `/loans/${unknownLoan}/payments`, {
      body: { amount: 1, reference: 'a' },
    });
    await ops(payer.token, '/unmatched-pix'); // a read: not audited
    const trail = (await (await ops(OPS_TOKEN, `/audit?actor_id=${payer.operator.id}`)).json()) as {
      data: { actor: unknown; operation_id: string; status: number; problem_code: string | null }[];
    };
    expect(
      trail.data.map((entry) => [entry.operation_id, entry.status, entry.problem_code]),
    ).toEqual([
      ['recordLoanPayment', 404, 'loan_not_found'],
      ['createPartner', 403, 'operator_role_required'],
    ]);
    expect(trail.data[0]!.actor).toEqual({ type: 'operator', id: payer.operator.id });
    // The break-glass token's own commands are audited under its id.
    const created = await createOperator(['kyc_reviewer']);
    const mine = (await (await ops(OPS_TOKEN, '/audit?actor_id=break_glass&limit=5')).json()) as {
      data: { detail: { operator_id?: string } | null }[];
    };
    expect(mine.data.some((entry) => entry.detail?.operator_id === created.operator.id)).toBe(true);
  });

  it('lose access when their token is rotated or they are deactivated', async () => {
    const payer = await createOperator(['payments']);
    const rotated = await ops(OPS_TOKEN, `/operators/${payer.operator.id}/token`, { body: {} });
    expect(rotated.status).toBe(201);
    const { token } = (await rotated.json()) as TestOperator;
    expect((await ops(payer.token, '/unmatched-pix')).status).toBe(401);
    expect((await ops(token, '/unmatched-pix')).status).toBe(200);
    const changed = await ops(OPS_TOKEN, `/operators/${payer.operator.id}`, {
      method: 'PATCH',
      body: { roles: ['payments', 'disbursement'] },
    });
    expect(await changed.json()).toMatchObject({ roles: ['payments', 'disbursement'] });
    const deactivated = await ops(OPS_TOKEN, `/operators/${payer.operator.id}/deactivation`, {
      body: {},
    });
    expect(await deactivated.json()).toMatchObject({ status: 'deactivated' });
    expect((await ops(token, '/unmatched-pix')).status).toBe(401);
  });

  it('refuses bad input and a second operator with the same e-mail, creating nothing', async () => {
    const email = `dup-${randomUUID()}@lender.example`;
    const bad = await ops(OPS_TOKEN, '/operators', {
      body: { name: 'X', email, roles: ['superuser'] },
    });
    expect(bad.status).toBe(422);
    const first = await ops(OPS_TOKEN, '/operators', {
      body: { name: 'X', email, roles: ['admin'] },
    });
    expect(first.status).toBe(201);
    const again = await ops(OPS_TOKEN, '/operators', {
      body: { name: 'Y', email: email.toUpperCase(), roles: ['payments'] },
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: 'operator_already_exists' });
    expect((await ops('opk_not-a-token', '/unmatched-pix')).status).toBe(401);
  });
});

describe('OPS_PORT', () => {
  it('serves the ops API on its own listener only', async () => {
    const opsPort = await freePort();
    const split = await startStack({ worker: false, env: { OPS_PORT: String(opsPort) } });
    try {
      const opsBase = `http://127.0.0.1:${opsPort}`;
      const auth = { authorization: `Bearer ${OPS_TOKEN}` };
      expect((await fetch(`${opsBase}/ops/v1/unmatched-pix`, { headers: auth })).status).toBe(200);
      const onPartnerPort = await fetch(`${split.baseUrl}/ops/v1/unmatched-pix`, { headers: auth });
      expect(onPartnerPort.status).toBe(404);
      expect(await onPartnerPort.json()).toMatchObject({ code: 'route_not_found' });
      expect((await fetch(`${opsBase}/v3/customers`)).status).toBe(404);
      expect((await fetch(`${split.baseUrl}/v3/customers`)).status).toBe(401);
      expect((await fetch(`${opsBase}/healthz`)).status).toBe(200);
    } finally {
      await split.stop();
    }
  });
});
