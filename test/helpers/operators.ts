import { randomUUID } from 'node:crypto';
import { errorCatalogue, type ErrorCode } from '../../src/errors.js';
import { OPS_TOKEN, type TestStack } from './stack.js';

type Stack = Pick<TestStack, 'baseUrl'>;

export interface TestOperator {
  operator: { id: string; roles: string[]; status: string; created_by: string };
  token: string;
}

/** A new operator with these roles, created by the break-glass administrator (or `by`). */
export async function createOperator(
  stack: Stack,
  roles: string[],
  by = OPS_TOKEN,
): Promise<TestOperator> {
  const response = await opsRequest(stack, by, '/operators', {
    name: `Operator ${roles.join('+')}`,
    email: `op-${randomUUID()}@lender.example`,
    roles,
  });
  if (response.status !== 201)
    throw new Error(`operator: ${response.status} ${await response.text()}`);
  return (await response.json()) as TestOperator;
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
 * another operator's approval (dual control, contract §15). Answers what the command answered
 * before dual control: the loan after it (200), or its refusal.
 */
export async function moneyDesk(stack: Stack, makerToken = OPS_TOKEN) {
  const checker = await createOperator(stack, ['payments', 'disbursement']);
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
