import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrateForApplication } from '../../src/devstack/database-roles.js';
import { freePort } from '../../src/devstack/free-port.js';
import { waitForMessage } from '../helpers/mailbox.js';
import {
  createOperator as createTestOperator,
  enrollFromMail,
  enrollmentCodeIn,
  staff,
  type TestOperator,
} from '../helpers/operators.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { addDays, businessDate } from '../../src/domain/business-date.js';

let stack: TestStack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const opsAt =
  (base: () => string) =>
  (token: string, path: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${base()}/ops/v1${path}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
const ops = opsAt(() => stack.baseUrl);

const createOperator = (roles: string[], by?: string) => createTestOperator(stack, roles, by);
const email = () => `op-${randomUUID()}@lender.example`;

interface ApprovalBody {
  id: string;
  kind: string;
  status: string;
  operator_id: string | null;
  maker: { id: string };
  checker: { id: string } | null;
  request: Record<string, unknown>;
  outcome: Record<string, unknown> | null;
}

const unknownLoan = `ln_${'0'.repeat(32)}`;
const unknownCustomer = `cust_${'0'.repeat(32)}`;

/** The break-glass counter as /metrics shows it (read with an operator's token, not OPS_TOKEN). */
async function breakGlassUses(base: string, token: string): Promise<number> {
  const text = await (
    await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })
  ).text();
  const line = /^ops_break_glass_uses_total (\d+)$/m.exec(text);
  if (!line) throw new Error('ops_break_glass_uses_total is not on /metrics');
  return Number(line[1]);
}

describe('the first two administrators (a database with none)', () => {
  const database = `first_admins_${randomBytes(4).toString('hex')}`;
  let owner: postgres.Sql;
  let fresh: TestStack;
  beforeAll(async () => {
    owner = postgres(inject('ownerDatabaseUrl'), { max: 1, onnotice: () => {} });
    await owner.unsafe(`create database ${database}`);
    const url = new URL(inject('ownerDatabaseUrl'));
    url.pathname = `/${database}`;
    fresh = await startStack({
      env: { DATABASE_URL: await migrateForApplication(url.toString()) },
    });
  });
  afterAll(async () => {
    await fresh?.stop();
    await owner.unsafe(`drop database if exists ${database} with (force)`);
    await owner.end();
  });

  it('are started by the break-glass token, each receiving its own token by mail; then the token starts no more, and every use of it is audited and counted', async () => {
    const freshOps = opsAt(() => fresh.baseUrl);
    const start = (address: string, roles = ['admin']) =>
      freshOps(OPS_TOKEN, '/operators', { body: { name: 'Administrator', email: address, roles } });

    // A desk operator is never the break-glass token's to make, even with no administrator yet.
    const desk = await start(email(), ['payments']);
    expect(desk.status).toBe(403);
    expect(await desk.json()).toMatchObject({ code: 'break_glass_limited' });

    const addresses = [email(), email()];
    const started: TestOperator[] = [];
    for (const address of addresses) {
      const response = await start(address);
      expect(response.status).toBe(201);
      const text = await response.text();
      // The token goes to the administrator's mailbox, not to whoever holds OPS_TOKEN.
      expect(text).not.toMatch(/opk_|oen_/);
      expect(JSON.parse(text)).toMatchObject({
        roles: ['admin'],
        status: 'active',
        created_by: 'break_glass',
      });
      const enrolled = await enrollFromMail(fresh, address);
      expect(enrolled.token).toMatch(/^opk_/);
      started.push(enrolled);
    }
    const [first, second] = started as [TestOperator, TestOperator];
    expect((await freshOps(first.token, '/operators')).status).toBe(200);

    // Two can act: the break-glass token starts no third, and changes no one's roles.
    const third = await start(email());
    expect(third.status).toBe(403);
    expect(await third.json()).toMatchObject({ code: 'break_glass_limited' });
    const promoted = await freshOps(OPS_TOKEN, `/operators/${first.operator.id}`, {
      method: 'PATCH',
      body: { roles: ['admin', 'payments'] },
    });
    expect(promoted.status).toBe(403);
    expect(await promoted.json()).toMatchObject({ code: 'break_glass_limited' });

    // From now on an administrator asks and the other approves.
    const asked = await freshOps(first.token, '/operators', {
      body: { name: 'Payer', email: email(), roles: ['payments'] },
    });
    expect(asked.status).toBe(202);
    const { id } = (await asked.json()) as ApprovalBody;
    const approved = await freshOps(second.token, `/approvals/${id}/approve`, { body: {} });
    expect(await approved.json()).toMatchObject({ status: 'approved' });

    // Every use of the token is in the trail (reads included) and on the counter an alert watches.
    const before = await breakGlassUses(fresh.baseUrl, first.token);
    expect(before).toBe(5);
    const trail = (await (
      await freshOps(OPS_TOKEN, '/audit?actor_id=break_glass&limit=100')
    ).json()) as { data: { operation_id: string; method: string; status: number | null }[] };
    expect(trail.data.map((entry) => [entry.operation_id, entry.status])).toEqual([
      ['listAudit', null], // this read, still running as it lists itself
      ['updateOperatorRoles', 403],
      ['createOperator', 403],
      ['createOperator', 201],
      ['createOperator', 201],
      ['createOperator', 403],
    ]);
    expect(await breakGlassUses(fresh.baseUrl, first.token)).toBe(before + 1);
  });
});

describe('staff administration under dual control (issue 37)', () => {
  it('reproduces finding 1, refused: an administrator can neither grant herself a role nor make a puppet alone', async () => {
    const admin = await createOperator(['admin']);
    // Her own roles: not even asked.
    const own = await ops(admin.token, `/operators/${admin.operator.id}`, {
      method: 'PATCH',
      body: { roles: ['admin', 'disbursement'] },
    });
    expect(own.status).toBe(403);
    expect(await own.json()).toMatchObject({ code: 'self_administration' });

    // A puppet: only asked, and no operator (nor token) exists until another admin approves.
    const address = email();
    const asked = await ops(admin.token, '/operators', {
      body: { name: 'Puppet', email: address, roles: ['disbursement'] },
    });
    expect(asked.status).toBe(202);
    expect(asked.headers.get('location')).toMatch(/^\/ops\/v1\/approvals\/apr_/);
    const approval = (await asked.json()) as ApprovalBody;
    expect(approval).toMatchObject({
      kind: 'operator_creation',
      status: 'pending',
      maker: { id: admin.operator.id },
      request: { name: 'Puppet', email: address, roles: ['disbursement'] },
    });
    expect((await ops(admin.token, `/operators/${approval.operator_id}`)).status).toBe(404);
    const byMaker = await ops(admin.token, `/approvals/${approval.id}/approve`, { body: {} });
    expect(byMaker.status).toBe(403);
    expect(await byMaker.json()).toMatchObject({ code: 'approval_by_maker' });
    // The break-glass token, holding every role, decides nothing either.
    const byBreakGlass = await ops(OPS_TOKEN, `/approvals/${approval.id}/approve`, { body: {} });
    expect(byBreakGlass.status).toBe(403);
    expect(await byBreakGlass.json()).toMatchObject({ code: 'break_glass_limited' });
    expect((await ops(admin.token, `/operators/${approval.operator_id}`)).status).toBe(404);

    // Another administrator rejects it: it never exists, and no mail went out.
    const [, checker] = staff().admins;
    const rejected = await ops(checker.token, `/approvals/${approval.id}/reject`, {
      body: { reason: 'Nobody by that name works here' },
    });
    expect(await rejected.json()).toMatchObject({ status: 'rejected' });
    expect((await ops(admin.token, `/operators/${approval.operator_id}`)).status).toBe(404);
    await expect(waitForMessage(address, { timeoutMs: 500 })).rejects.toThrow(/no e-mail/);
  });

  it('changes roles once another administrator approves; the operator concerned decides nothing about itself', async () => {
    const [maker, other] = staff().admins;
    const target = await createOperator(['admin']);
    const asked = await ops(maker.token, `/operators/${target.operator.id}`, {
      method: 'PATCH',
      body: { roles: ['admin', 'payments'] },
    });
    expect(asked.status).toBe(202);
    const approval = (await asked.json()) as ApprovalBody;
    expect(approval).toMatchObject({
      kind: 'role_change',
      operator_id: target.operator.id,
      request: { roles: ['admin', 'payments'] },
    });
    const bySelf = await ops(target.token, `/approvals/${approval.id}/approve`, { body: {} });
    expect(bySelf.status).toBe(403);
    expect(await bySelf.json()).toMatchObject({ code: 'self_administration' });
    expect(await (await ops(maker.token, `/operators/${target.operator.id}`)).json()).toMatchObject(
      { roles: ['admin'] },
    );
    const approved = await ops(other.token, `/approvals/${approval.id}/approve`, { body: {} });
    expect(await approved.json()).toMatchObject({
      status: 'approved',
      checker: { id: other.operator.id },
    });
    expect(await (await ops(maker.token, `/operators/${target.operator.id}`)).json()).toMatchObject(
      { roles: ['admin', 'payments'] },
    );
  });

  it('hands a new token to its operator alone: neither administrator sees it, the code works once', async () => {
    const [maker, checker] = staff().admins;
    const address = email();
    const asked = await ops(maker.token, '/operators', {
      body: { name: 'Reviewer', email: address, roles: ['kyc_reviewer'] },
    });
    const approval = (await asked.json()) as ApprovalBody;
    const approved = await ops(checker.token, `/approvals/${approval.id}/approve`, { body: {} });
    const answer = await approved.text();
    expect(JSON.parse(answer)).toMatchObject({ status: 'approved', loan: null });
    expect(answer).not.toMatch(/opk_|oen_/);
    const read = await (await ops(maker.token, `/approvals/${approval.id}`)).text();
    expect(read).not.toMatch(/opk_|oen_/);

    const message = await waitForMessage(address, { subjectIncludes: 'acesso de operador' });
    expect(message.to).toEqual([address]);
    const code = enrollmentCodeIn(message);
    const redeem = () =>
      fetch(`${stack.baseUrl}/ops/v1/operator-enrollments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code }),
      });
    const redeemed = await redeem();
    expect(redeemed.status).toBe(201);
    const { operator, token } = (await redeemed.json()) as TestOperator;
    expect(operator).toMatchObject({
      id: approval.operator_id,
      roles: ['kyc_reviewer'],
      created_by: maker.operator.id,
    });
    expect((await ops(token, '/ledger/trial-balance')).status).toBe(200);
    const again = await redeem();
    expect(again.status).toBe(401);
    // The exchange is audited under the operator's own name.
    const trail = (await (
      await ops(maker.token, `/audit?actor_id=${operator.id}&operation_id=redeemOperatorEnrollment`)
    ).json()) as { data: { status: number }[] };
    expect(trail.data.map((entry) => entry.status)).toEqual([201]);
  });

  it('refuses each role outside its commands (403), lets it through to its own', async () => {
    const [reviewer, payer, disburser] = await Promise.all([
      createOperator(['kyc_reviewer']),
      createOperator(['payments']),
      createOperator(['disbursement']),
    ]);
    const refused = [
      [payer.token, '/partners', { name: 'A partner' }],
      [payer.token, `/customers/${unknownCustomer}/review`, { items: [] }],
      [payer.token, `/loans/${unknownLoan}/disbursement`, { outcome: 'confirmed' }],
      [reviewer.token, `/loans/${unknownLoan}/payments`, { amount: 100, reference: 'r1' }],
      [reviewer.token, '/operators', { name: 'X', email: 'x@lender.example', roles: ['admin'] }],
      [reviewer.token, `/operators/${payer.operator.id}/token`, {}],
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

  it("gives Prometheus's operator (metrics_reader alone) /metrics and nothing else", async () => {
    const scraper = await createOperator(['metrics_reader']);
    const metrics = await fetch(`${stack.baseUrl}/metrics`, {
      headers: { authorization: `Bearer ${scraper.token}` },
    });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^database_up 1$/m);
    for (const path of ['/ledger/trial-balance', '/unmatched-pix', '/audit', '/approvals']) {
      const read = await ops(scraper.token, path);
      expect(read.status, path).toBe(403);
      expect(await read.json()).toMatchObject({ code: 'operator_role_required' });
    }
    // With another role besides, the operator is that role's, as before.
    const reviewer = await createOperator(['metrics_reader', 'kyc_reviewer']);
    expect((await ops(reviewer.token, '/ledger/trial-balance')).status).toBe(200);
  });

  it('are audited: every command with its actor, time and outcome, refusals included; every read of the break-glass token too', async () => {
    const payer = await createOperator(['payments']);
    await ops(payer.token, '/partners', { body: { name: 'Not mine to create' } });
    await ops(payer.token, `/loans/${unknownLoan}/payments`, {
      body: { amount: 1, reference: 'a' },
    });
    await ops(payer.token, '/unmatched-pix'); // an operator's read: not audited
    const [admin] = staff().admins;
    const trail = (await (
      await ops(admin.token, `/audit?actor_id=${payer.operator.id}`)
    ).json()) as {
      data: { actor: unknown; operation_id: string; status: number; problem_code: string | null }[];
    };
    expect(
      trail.data.map((entry) => [entry.operation_id, entry.status, entry.problem_code]),
    ).toEqual([
      ['recordLoanPayment', 404, 'loan_not_found'],
      ['createPartner', 403, 'operator_role_required'],
      ['redeemOperatorEnrollment', 201, null],
    ]);
    expect(trail.data[0]!.actor).toEqual({ type: 'operator', id: payer.operator.id });
    // By day (America/Sao_Paulo, both ends included): today's are these three, none before.
    const today = businessDate(new Date());
    const days = async (query: string) =>
      (
        (await (
          await ops(admin.token, `/audit?actor_id=${payer.operator.id}&${query}`)
        ).json()) as { data: unknown[] }
      ).data.length;
    expect(await days(`from=${today}&to=${today}`)).toBe(3);
    expect(await days(`to=${addDays(today, -1)}`)).toBe(0);
    expect(await days(`from=${addDays(today, 1)}`)).toBe(0);
    // The break-glass token's reads are audited under its id, and counted.
    const before = await breakGlassUses(stack.baseUrl, admin.token);
    const read = await ops(OPS_TOKEN, '/unmatched-pix');
    expect(read.status).toBe(200);
    expect(await breakGlassUses(stack.baseUrl, admin.token)).toBe(before + 1);
    const mine = (await (
      await ops(admin.token, '/audit?actor_id=break_glass&operation_id=listUnmatchedPix&limit=100')
    ).json()) as { data: { request_id: string; method: string; status: number }[] };
    expect(mine.data).toContainEqual(
      expect.objectContaining({
        request_id: read.headers.get('x-request-id'),
        method: 'GET',
        status: 200,
      }),
    );
  });

  it("rotates a token: one's own at once, another's once approved, its new token mailed to it", async () => {
    const [maker, checker] = staff().admins;
    const payer = await createOperator(['payments']);
    // One's own: at once, the token in the answer.
    const own = await ops(payer.token, `/operators/${payer.operator.id}/token`, { body: {} });
    expect(own.status).toBe(201);
    const { token } = (await own.json()) as TestOperator;
    expect((await ops(payer.token, '/unmatched-pix')).status).toBe(401);
    expect((await ops(token, '/unmatched-pix')).status).toBe(200);

    // Another's: held, and the new token goes to its operator's mailbox.
    const asked = await ops(maker.token, `/operators/${payer.operator.id}/token`, { body: {} });
    expect(asked.status).toBe(202);
    const approval = (await asked.json()) as ApprovalBody;
    expect(approval).toMatchObject({ kind: 'token_rotation', operator_id: payer.operator.id });
    expect((await ops(token, '/unmatched-pix')).status).toBe(200);
    const since = new Date();
    const approved = await ops(checker.token, `/approvals/${approval.id}/approve`, { body: {} });
    expect(await approved.text()).not.toMatch(/opk_|oen_/);
    expect((await ops(token, '/unmatched-pix')).status).toBe(401);
    const mailed = await enrollFromMail(stack, await emailOf(payer), since);
    expect((await ops(mailed.token, '/unmatched-pix')).status).toBe(200);
    // The break-glass token rotates nobody's.
    const byBreakGlass = await ops(OPS_TOKEN, `/operators/${payer.operator.id}/token`, {
      body: {},
    });
    expect(byBreakGlass.status).toBe(403);
  });

  it('deactivates at once, by one administrator; reactivates only once another approves, with a new token by mail', async () => {
    const [maker, checker] = staff().admins;
    const payer = await createOperator(['payments']);
    const address = await emailOf(payer);
    expect(
      (await ops(OPS_TOKEN, `/operators/${payer.operator.id}/deactivation`, { body: {} })).status,
    ).toBe(403);
    const deactivated = await ops(maker.token, `/operators/${payer.operator.id}/deactivation`, {
      body: {},
    });
    expect(await deactivated.json()).toMatchObject({ status: 'deactivated' });
    expect((await ops(payer.token, '/unmatched-pix')).status).toBe(401);

    const asked = await ops(maker.token, `/operators/${payer.operator.id}/reactivation`, {
      body: {},
    });
    expect(asked.status).toBe(202);
    const approval = (await asked.json()) as ApprovalBody;
    expect(approval).toMatchObject({ kind: 'operator_reactivation' });
    const since = new Date();
    const approved = await ops(checker.token, `/approvals/${approval.id}/approve`, { body: {} });
    expect(await approved.json()).toMatchObject({ status: 'approved' });
    expect(await (await ops(maker.token, `/operators/${payer.operator.id}`)).json()).toMatchObject({
      status: 'active',
      deactivated_at: null,
    });
    // Its old token stays revoked; the mailed code gives it a new one.
    expect((await ops(payer.token, '/unmatched-pix')).status).toBe(401);
    const back = await enrollFromMail(stack, address, since);
    expect((await ops(back.token, '/unmatched-pix')).status).toBe(200);
    // An active operator is not reactivated.
    const again = await ops(maker.token, `/operators/${payer.operator.id}/reactivation`, {
      body: {},
    });
    expect(again.status).toBe(409);
  });

  it('refuses bad input and a second operator with the same e-mail, creating nothing', async () => {
    const [maker] = staff().admins;
    const address = `dup-${randomUUID()}@lender.example`;
    const bad = await ops(maker.token, '/operators', {
      body: { name: 'X', email: address, roles: ['superuser'] },
    });
    expect(bad.status).toBe(422);
    await createOperator(['payments']).then(async (made) => {
      const taken = await emailOf(made);
      const again = await ops(maker.token, '/operators', {
        body: { name: 'Y', email: taken.toUpperCase(), roles: ['payments'] },
      });
      expect(again.status).toBe(409);
      expect(await again.json()).toMatchObject({ code: 'operator_already_exists' });
    });
    expect((await ops('opk_not-a-token', '/unmatched-pix')).status).toBe(401);
    const unknownCode = await fetch(`${stack.baseUrl}/ops/v1/operator-enrollments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: `oen_${'A'.repeat(43)}` }),
    });
    expect(unknownCode.status).toBe(401);
  });
});

/** An operator's e-mail, as an administrator reads it. */
async function emailOf(operator: TestOperator): Promise<string> {
  const [admin] = staff().admins;
  const read = (await (await ops(admin.token, `/operators/${operator.operator.id}`)).json()) as {
    email: string;
  };
  return read.email;
}

describe('OPS_PORT', () => {
  it('serves the ops API and the back office on its own listener only', async () => {
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
      // The back office is a page of the ops listener: there only.
      expect((await fetch(`${opsBase}/ops/console/sign-in`)).status).toBe(200);
      expect((await fetch(`${split.baseUrl}/ops/console/sign-in`)).status).toBe(404);
    } finally {
      await split.stop();
    }
  });
});
