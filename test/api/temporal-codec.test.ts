import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyRing } from '../../src/domain/key-ring.js';
import { PayloadEncryptionCodec } from '../../src/temporal/payload-codec.js';
import { createOperator, opsRequest, staff } from '../helpers/operators.js';
import { eventually, OPS_TOKEN, startStack, TestClock, type TestStack } from '../helpers/stack.js';

/**
 * The Temporal UI's codec endpoint (contract §15, issue 37 finding 3): Temporal's Remote Codec
 * protocol, decode only, for operators with the role workflow_viewer — a bearer token, or the
 * session its sign-in page sets for the UI's browser, live only while its token is — with every
 * decode audited and CORS for the UI's origin alone.
 */

const UI = 'http://localhost:8233';
let stack: TestStack;
const clock = new TestClock();

beforeAll(async () => {
  stack = await startStack({ clock });
});
afterAll(async () => {
  await stack?.stop();
});

const toJson = ({ metadata, data }: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(data ?? []).toString('base64'),
});
const fromJson = ({ metadata, data }: { metadata: Record<string, string>; data: string }) => ({
  metadata: Object.fromEntries(
    Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
  ),
  data: Buffer.from(data, 'base64'),
});

const codecCall = (
  direction: 'decode' | 'encode',
  payloads: Payload[],
  headers: Record<string, string> = {},
) =>
  fetch(`${stack.baseUrl}/ops/v1/temporal-codec/${direction}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
    body: JSON.stringify({ payloads: payloads.map(toJson) }),
  });
const bearer = { authorization: `Bearer ${OPS_TOKEN}` };

async function decoded(response: Response): Promise<unknown[]> {
  expect(response.status).toBe(200);
  const body = (await response.json()) as {
    payloads: { metadata: Record<string, string>; data: string }[];
  };
  return body.payloads.map((payload) => defaultPayloadConverter.fromPayload(fromJson(payload)));
}

async function signIn(token: string): Promise<Response> {
  return fetch(`${stack.baseUrl}/ops/v1/temporal-codec`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
    redirect: 'manual',
  });
}

describe('the codec endpoint for the Temporal UI', () => {
  it("decodes a payload the worker's codec encrypted, for an ops bearer token only", async () => {
    const created = await fetch(`${stack.baseUrl}/ops/v1/smoke-checks`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ delay: '1s' }),
    });
    expect(created.status).toBe(202);
    const check = (await created.json()) as { id: string; workflow_id: string };
    const handle = stack.temporal.workflow.getHandle(check.workflow_id);
    await eventually(
      async () => (await handle.describe()).status.name === 'COMPLETED' || undefined,
      'the smoke check to complete',
    );
    // The history as Temporal keeps it: the input and the activity's arguments are ciphertext.
    const events = (await handle.fetchHistory()).events ?? [];
    const input = events[0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    const scheduled = events.find((event) => event.activityTaskScheduledEventAttributes)!
      .activityTaskScheduledEventAttributes!.input!.payloads![0]!;
    for (const payload of [input, scheduled]) {
      expect(Buffer.from(payload.metadata!.encoding!).toString()).toBe('binary/encrypted');
      expect(Buffer.from(payload.data!).toString('latin1')).not.toContain(check.id);
    }

    expect((await codecCall('decode', [input])).status).toBe(401);
    expect((await codecCall('decode', [input], { authorization: 'Bearer wrong' })).status).toBe(
      401,
    );
    const [workflowInput, activityInput] = await decoded(
      await codecCall('decode', [input, scheduled], bearer),
    );
    expect(workflowInput).toMatchObject({ smokeCheckId: check.id });
    expect(JSON.stringify(activityInput)).toContain(check.id);
  });

  it('shows plain payloads as they are, names a key it does not hold, and encodes for nobody', async () => {
    const plain = defaultPayloadConverter.toPayload({ hello: 'world' });
    expect(await decoded(await codecCall('decode', [plain], bearer))).toEqual([{ hello: 'world' }]);

    // Nobody gets a payload sealed here, not even the break-glass administrator: the worker
    // seals in-process, and a sealed payload from outside would pass the workers' codec.
    for (const method of ['POST', 'OPTIONS'])
      expect(
        (
          await fetch(`${stack.baseUrl}/ops/v1/temporal-codec/encode`, {
            method,
            headers: { ...bearer, 'content-type': 'application/json', origin: UI },
            body: method === 'POST' ? JSON.stringify({ payloads: [toJson(plain)] }) : null,
          })
        ).status,
      ).toBe(404);

    const foreign = new PayloadEncryptionCodec(
      keyRing([
        { id: 'elsewhere', secret: Buffer.from('another-deployment-key-0123456789abcdef') },
      ]),
    );
    const [sealed] = await foreign.encode([plain]);
    const refused = await codecCall('decode', [plain, sealed!], bearer);
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({
      code: 'validation_error',
      errors: [
        {
          path: 'payloads.1',
          message:
            'a payload encrypted under key "elsewhere", which TEMPORAL_PAYLOAD_KEYS does not list',
        },
      ],
    });
    expect((await codecCall('decode', [], { ...bearer })).status).toBe(200);
    const malformed = await fetch(`${stack.baseUrl}/ops/v1/temporal-codec/decode`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ payloads: [{ data: 'not base64!' }] }),
    });
    expect(malformed.status).toBe(422);
  });

  it('decodes for the role workflow_viewer only, and audits every decode: who, which workflow, how many', async () => {
    const sealed = await stack.temporal.options.dataConverter.payloadCodecs![0]!.encode([
      defaultPayloadConverter.toPayload({ cpf: '52998224725' }),
    ]);
    // The review's reproduction: a kyc_reviewer decoding a loan's history. Refused, and audited.
    const reviewer = await createOperator(stack, ['kyc_reviewer']);
    const admin = await createOperator(stack, ['admin']);
    for (const { token } of [reviewer, admin]) {
      const refused = await codecCall('decode', sealed, {
        authorization: `Bearer ${token}`,
        'x-workflow-id': 'loan/ln_00000000000000000000000000000001',
      });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({
        code: 'operator_role_required',
        roles: ['workflow_viewer'],
      });
    }
    const viewer = await createOperator(stack, ['workflow_viewer']);
    const answer = await codecCall('decode', [...sealed, defaultPayloadConverter.toPayload(1)], {
      authorization: `Bearer ${viewer.token}`,
      'x-workflow-id': 'loan/ln_00000000000000000000000000000002',
    });
    expect(await decoded(answer)).toEqual([{ cpf: '52998224725' }, 1]);

    const audit = async (actorId: string) =>
      (
        (await (
          await fetch(
            `${stack.baseUrl}/ops/v1/audit?operation_id=decodeTemporalPayloads&actor_id=${actorId}`,
            { headers: bearer },
          )
        ).json()) as { data: { status: number; problem_code: string | null; detail: unknown }[] }
      ).data;
    expect(await audit(reviewer.operator.id)).toEqual([
      expect.objectContaining({
        status: 403,
        problem_code: 'operator_role_required',
        detail: null,
      }),
    ]);
    expect(await audit(viewer.operator.id)).toEqual([
      expect.objectContaining({
        status: 200,
        problem_code: null,
        detail: {
          namespace: 'default',
          workflow_id: 'loan/ln_00000000000000000000000000000002',
          payloads: 2,
          decoded: 2,
          plain: 1,
          customer_ids: [],
        },
      }),
    ]);
  });

  it("answers the UI's CORS preflight without authentication, and no other origin", async () => {
    const preflight = (origin: string) =>
      fetch(`${stack.baseUrl}/ops/v1/temporal-codec/decode`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-namespace',
        },
      });
    const ok = await preflight(UI);
    expect(ok.status).toBe(204);
    expect(Object.fromEntries(ok.headers)).toMatchObject({
      'access-control-allow-origin': UI,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'Content-Type, X-Namespace, X-Workflow-Id',
      vary: 'Origin',
    });
    const other = await preflight('http://localhost:9999');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('access-control-allow-credentials')).toBeNull();
    // The refusal itself is readable by the UI (so it can say the codec needs a sign-in).
    const unauthenticated = await codecCall('decode', [], { origin: UI });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('access-control-allow-origin')).toBe(UI);
  });

  it("signs staff in for the UI's fetches: a short HttpOnly, SameSite=Strict session, never the token", async () => {
    const page = await fetch(`${stack.baseUrl}/ops/v1/temporal-codec`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('name="token"');

    const refused = await signIn('not-the-token');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('set-cookie')).toBeNull();

    const signedIn = await signIn(OPS_TOKEN);
    expect(signedIn.status).toBe(200);
    const setCookie = signedIn.headers.get('set-cookie')!;
    expect(setCookie).toMatch(
      /^temporal_codec_session=v2\.dev\.\d+\.break_glass\.ops-[\w-]{32}\.[\w-]+;/,
    );
    expect(setCookie).toContain('Path=/ops/v1/temporal-codec');
    expect(setCookie).toContain('Max-Age=3600');
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).not.toContain(OPS_TOKEN);
    const cookie = setCookie.split(';')[0]!;
    expect(await signedIn.text()).toContain('Signed in as <code>break_glass</code>');

    const plain = defaultPayloadConverter.toPayload('from the UI');
    const fromUi = await codecCall('decode', [plain], { cookie, origin: UI });
    expect(fromUi.headers.get('access-control-allow-origin')).toBe(UI);
    expect(fromUi.headers.get('access-control-allow-credentials')).toBe('true');
    expect(await decoded(fromUi)).toEqual(['from the UI']);
    // The session counts only in the UI's fetches: not from another origin, not without one.
    expect(
      (await codecCall('decode', [plain], { cookie, origin: 'http://localhost:8025' })).status,
    ).toBe(401);
    expect((await codecCall('decode', [plain], { cookie })).status).toBe(401);
    // A forged or altered session is nobody's.
    const forged = cookie.replace(/\.break_glass\./, '.opr_someone.');
    expect((await codecCall('decode', [plain], { cookie: forged, origin: UI })).status).toBe(401);
    // An hour later it has lapsed.
    clock.advance(3_601_000);
    expect((await codecCall('decode', [plain], { cookie, origin: UI })).status).toBe(401);
  });

  it("ends an operator's UI session when its token is rotated or revoked, its role taken, or the operator deactivated", async () => {
    const plain = defaultPayloadConverter.toPayload('from the UI');
    const sessionOf = async (token: string) => {
      const signedIn = await signIn(token);
      expect(signedIn.status).toBe(200);
      return signedIn.headers.get('set-cookie')!.split(';')[0]!;
    };
    const decodes = async (cookie: string) =>
      (await codecCall('decode', [plain], { cookie, origin: UI })).status;
    // Staff administration as staff do it (issue 37): an administrator asks, another approves.
    const { admins } = staff();
    const asAdmin = (token: string, method: string, path: string, body?: unknown) =>
      fetch(`${stack.baseUrl}/ops/v1/operators/${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const setRoles = async (operatorId: string, roles: string[]) => {
      const asked = await asAdmin(admins[0].token, 'PATCH', operatorId, { roles });
      expect(asked.status).toBe(202);
      const { id } = (await asked.json()) as { id: string };
      const decided = await opsRequest(stack, admins[1].token, `/approvals/${id}/approve`);
      expect(((await decided.json()) as { status: string }).status).toBe('approved');
    };

    // Another role's token gets no session at all.
    const reviewer = await createOperator(stack, ['kyc_reviewer']);
    const refused = await signIn(reviewer.token);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('set-cookie')).toBeNull();

    // Rotated: the session made from the old token ends; one from the new token works.
    const viewer = await createOperator(stack, ['workflow_viewer']);
    const first = await sessionOf(viewer.token);
    expect(await decodes(first)).toBe(200);
    // The operator rotates its own token (at once; another's is an approved request).
    const rotated = await asAdmin(viewer.token, 'POST', `${viewer.operator.id}/token`);
    expect(rotated.status).toBe(201);
    const { token: newToken } = (await rotated.json()) as { token: string };
    expect(await decodes(first)).toBe(401);
    const second = await sessionOf(newToken);
    expect(await decodes(second)).toBe(200);

    // The role taken away, then given back: the session ends, and counts again.
    await setRoles(viewer.operator.id, ['kyc_reviewer']);
    expect(await decodes(second)).toBe(401);
    await setRoles(viewer.operator.id, ['workflow_viewer']);
    expect(await decodes(second)).toBe(200);

    // Deactivated (one administrator, at once; it revokes the token): over.
    expect(
      (await asAdmin(admins[0].token, 'POST', `${viewer.operator.id}/deactivation`)).status,
    ).toBe(200);
    expect(await decodes(second)).toBe(401);
  });
});
