import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { errorCatalogue, type ErrorCode } from '../../src/errors.js';
import { waitForMessage } from './mailbox.js';
import type { SeededStaff, TestOperator } from './seed-staff.js';
import { OPS_TOKEN, type TestStack } from './stack.js';

export type { TestOperator } from './seed-staff.js';

type Stack = Pick<TestStack, 'baseUrl'>;

/** The run's seeded staff (the global setup's); a bench names its own in TEST_STAFF. */
export function staff(): SeededStaff {
  return process.env.TEST_STAFF
    ? (JSON.parse(process.env.TEST_STAFF) as SeededStaff)
    : inject('staff');
}

/**
 * A new operator with these roles, made the way staff make one (issue 37): an administrator asks
 * (`by`, the first seeded administrator by default), another administrator approves, and the new
 * operator redeems the code mailed to its address for its token. The stack needs a worker: the
 * approval's workflow runs the creation.
 */
export async function createOperator(
  stack: Stack,
  roles: string[],
  by?: string,
): Promise<TestOperator> {
  const { admins } = staff();
  const maker = by ?? admins[0].token;
  const checker = maker === admins[0].token ? admins[1] : admins[0];
  const email = `op-${randomUUID()}@lender.example`;
  const asked = await opsRequest(stack, maker, '/operators', {
    name: `Operator ${roles.join('+')}`,
    email,
    roles,
  });
  if (asked.status !== 202) throw new Error(`operator: ${asked.status} ${await asked.text()}`);
  const { id } = (await asked.json()) as { id: string };
  const decided = await opsRequest(stack, checker.token, `/approvals/${id}/approve`);
  const approval = (await decided.json()) as { status?: string };
  if (approval.status !== 'approved')
    throw new Error(`operator approval ${id}: ${decided.status} ${JSON.stringify(approval)}`);
  return enrollFromMail(stack, email);
}

/** The one-time code in an enrollment mail (`oen_…`). */
export function enrollmentCodeIn(message: { text: string; subject: string }): string {
  const code = /oen_[A-Za-z0-9_-]{43}/.exec(message.text)?.[0];
  if (!code) throw new Error(`no enrollment code in the e-mail "${message.subject}"`);
  return code;
}

/** Redeems the newest enrollment code mailed to `email` (after `after`, when given). */
export async function enrollFromMail(
  stack: Stack,
  email: string,
  after?: Date,
): Promise<TestOperator> {
  const message = await waitForMessage(email, {
    subjectIncludes: 'acesso de operador',
    ...(after ? { after } : {}),
  });
  const redeemed = await fetch(`${stack.baseUrl}/ops/v1/operator-enrollments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code: enrollmentCodeIn(message) }),
  });
  if (redeemed.status !== 201)
    throw new Error(`enrollment of ${email}: ${redeemed.status} ${await redeemed.text()}`);
  return (await redeemed.json()) as TestOperator;
}

/** `POST /ops/v1{path}` with an operator's token (a body: JSON). */
export const opsRequest = (stack: Stack, token: string, path: string, body?: unknown) =>
  fetch(`${stack.baseUrl}/ops/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/**
 * The money desk of tests that move money on production loans by hand: the maker's command, then
 * the seeded money desk's approval (dual control, contract §15). Answers what the command answered
 * before dual control: the loan after it (200), or its refusal.
 */
export async function moneyDesk(stack: Stack, makerToken = OPS_TOKEN) {
  const checker = staff().desk;
  return async (path: string, body?: unknown): Promise<Response> => {
    const asked = await opsRequest(stack, makerToken, path, body);
    if (asked.status !== 202) return asked;
    const { id } = (await asked.json()) as { id: string };
    const decided = await opsRequest(stack, checker.token, `/approvals/${id}/approve`);
    const approval = (await decided.json()) as {
      status: string;
      loan: unknown;
      outcome: { code: ErrorCode; detail: string } | null;
    };
    if (approval.status === 'approved') return Response.json(approval.loan, { status: 200 });
    if (approval.status === 'failed' && approval.outcome)
      return Response.json(approval.outcome, {
        status: errorCatalogue[approval.outcome.code].status,
      });
    throw new Error(`approval ${id}: ${decided.status} ${JSON.stringify(approval)}`);
  };
}
