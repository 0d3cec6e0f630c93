import { once } from 'node:events';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { reconcileLedger } from '../../src/db/queries/ledger.js';
import { decideUpdate, type Decision } from '../../workflows/approval/messages.js';
import type { loanTransactionSchema } from '../../src/http/routes/loans/schema.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import { eventually } from '../helpers/eventually.js';
import { createOperator, opsRequest, staff, type TestOperator } from '../helpers/operators.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { spawnWorkerProcess } from '../helpers/worker-process.js';

type Transaction = z.infer<typeof loanTransactionSchema>;
interface ApprovalBody {
  id: string;
  kind: string;
  loan_id: string;
  status: string;
  maker: { id: string };
  checker: { id: string } | null;
  request: Record<string, unknown>;
  outcome: Record<string, unknown> | null;
  loan?: LoanBody | null;
}

let stack: TestStack;
let production: Client;
let loan: LoanBody;
let maker: TestOperator;
let checker: TestOperator;
let reviewer: TestOperator;

beforeAll(async () => {
  stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1h' } });
  const partner = await createPartner(stack);
  production = client(stack, await tokenFor(stack, partner.credentials.production));
  // Its disbursement was itself confirmed by a maker and approved by a checker (the helper).
  loan = await activeLoan(stack, production, { opsToken: OPS_TOKEN, production: true });
  [maker, checker, reviewer] = await Promise.all([
    createOperator(stack, ['payments']),
    createOperator(stack, ['payments']),
    createOperator(stack, ['kyc_reviewer']),
  ]);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

const transactions = async () =>
  (await json<{ data: Transaction[] }>(production(`/v3/loans/${loan.id}/transactions`))).data;
const payments = async () =>
  (
    await json<{ data: Transaction[] }>(production(`/v3/loans/${loan.id}/transactions`))
  ).data.filter((transaction) => transaction.type !== 'disbursement');
const pay = (token: string, reference: string, amount = 1_000) =>
  opsRequest(stack, token, `/loans/${loan.id}/payments`, { amount, reference });
const decide = (token: string, id: string, decision: 'approve' | 'reject', body?: unknown) =>
  opsRequest(stack, token, `/approvals/${id}/${decision}`, body);

describe('money moved by hand on a production loan (dual control)', () => {
  it('waits for another operator: the maker and the wrong desk are refused, the approval lands once', async () => {
    const asked = await pay(maker.token, 'DC-1');
    expect(asked.status).toBe(202);
    const approval = (await asked.json()) as ApprovalBody;
    expect(asked.headers.get('location')).toBe(`/ops/v1/approvals/${approval.id}`);
    expect(approval).toMatchObject({
      kind: 'payment',
      status: 'pending',
      maker: { id: maker.operator.id },
      checker: null,
      request: { amount: 1_000, reference: 'DC-1' },
    });
    expect(typeof approval.request.paid_at).toBe('string'); // the day the money came, fixed now
    expect(await payments()).toEqual([]); // nothing moved yet

    const byMaker = await decide(maker.token, approval.id, 'approve');
    expect(byMaker.status).toBe(403);
    expect(await byMaker.json()).toMatchObject({ code: 'approval_by_maker' });
    const byReviewer = await decide(reviewer.token, approval.id, 'approve');
    expect(byReviewer.status).toBe(403);
    expect(await byReviewer.json()).toMatchObject({ code: 'operator_role_required' });
    expect(await payments()).toEqual([]);

    // Two checkers at once: one decision runs the payment, the other is refused or sees it.
    const [first, second] = await Promise.all([
      decide(checker.token, approval.id, 'approve'),
      decide(checker.token, approval.id, 'approve'),
    ]);
    const decided = [first, second].find((response) => response.status === 200)!;
    const body = (await decided.json()) as ApprovalBody;
    expect(body).toMatchObject({ status: 'approved', checker: { id: checker.operator.id } });
    expect(body.loan).toMatchObject({ id: loan.id });
    expect([first, second].map((response) => response.status).sort()).toEqual(
      first.status === second.status ? [200, 200] : [200, 409],
    );
    const paid = await payments();
    expect(paid).toHaveLength(1);
    // Both operators are on the transaction, and the maker on the event partners receive.
    expect(paid[0]).toMatchObject({
      reference: 'DC-1',
      amount: 1_000,
      recorded_by: { type: 'operator', id: maker.operator.id },
      approved_by: { type: 'operator', id: checker.operator.id },
    });
    const received = await json<{
      data: { actor?: unknown; data: { payment: { reference: string } } }[];
    }>(production('/v3/events?type=loan.payment_received'));
    const event = received.data.find((item) => item.data.payment.reference === 'DC-1');
    expect(event?.actor).toEqual({ type: 'operator', id: maker.operator.id });
    // The checker's retry is answered as it stands; anyone else's decision now is 409.
    const retried = await decide(checker.token, approval.id, 'approve');
    expect(await retried.json()).toMatchObject({ id: approval.id, status: 'approved' });
    const other = await createOperator(stack, ['payments']);
    expect((await decide(other.token, approval.id, 'approve')).status).toBe(409);
    expect((await decide(checker.token, approval.id, 'reject')).status).toBe(409);
    // The same payment again is answered as recorded, with no second approval.
    const again = await pay(maker.token, 'DC-1');
    expect(again.status).toBe(200);
    expect(await payments()).toHaveLength(1);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);

    // The audit names both operators.
    const trail = await json<{
      data: { actor: { id: string }; operation_id: string; status: number; detail: unknown }[];
    }>(
      fetch(`${stack.baseUrl}/ops/v1/audit?limit=100`, {
        headers: { authorization: `Bearer ${OPS_TOKEN}` },
      }),
    );
    const about = trail.data.filter((entry) =>
      JSON.stringify(entry.detail ?? {}).includes(approval.id),
    );
    expect(about).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          actor: { type: 'operator', id: maker.operator.id },
          operation_id: 'recordLoanPayment',
          status: 202,
        }),
        expect.objectContaining({
          actor: { type: 'operator', id: checker.operator.id },
          operation_id: 'approveApproval',
          status: 200,
          detail: expect.objectContaining({
            maker_id: maker.operator.id,
            status: 'approved',
          }) as unknown,
        }),
      ]),
    );
  });

  it('refuses a decision sent straight to Temporal, not through the API: nothing is booked, the audit shows it (issue 37)', async () => {
    const asked = await pay(maker.token, 'DC-F');
    expect(asked.status).toBe(202);
    const approval = (await asked.json()) as ApprovalBody;
    // Whoever reaches Temporal's frontend — here with the payload keys too — sends the Update
    // the API would: a made-up checker, then a real one with a guessed proof.
    const handle = stack.temporal.workflow.getHandle(`approval/${approval.id}`);
    const forgeries: Decision[] = [
      { decision: 'approve', checkerId: `op_${'0'.repeat(32)}` },
      { decision: 'approve', checkerId: checker.operator.id, proof: `dev.${'A'.repeat(43)}` },
    ];
    for (const forged of forgeries) {
      const refused = await handle.executeUpdate(decideUpdate, { args: [forged] }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
      expect(((refused as WorkflowUpdateFailedError).cause as { type?: string }).type).toBe(
        'decision_unproven',
      );
    }
    expect((await payments()).map((payment) => payment.reference)).not.toContain('DC-F');
    const read = await json<ApprovalBody>(
      fetch(`${stack.baseUrl}/ops/v1/approvals/${approval.id}`, {
        headers: { authorization: `Bearer ${checker.token}` },
      }),
    );
    expect(read).toMatchObject({ status: 'pending', checker: null });

    // Each forgery is in the audit trail, under the system's name, with the checker it claimed.
    const trail = await json<{
      data: { actor: unknown; status: number; problem_code: string; detail: unknown }[];
    }>(
      fetch(`${stack.baseUrl}/ops/v1/audit?operation_id=approvalDecisionRefused&limit=100`, {
        headers: { authorization: `Bearer ${OPS_TOKEN}` },
      }),
    );
    const refusals = trail.data.filter(
      (entry) => (entry.detail as { approval_id?: string }).approval_id === approval.id,
    );
    expect(refusals).toEqual(
      expect.arrayContaining(
        forgeries.map((forged): unknown =>
          expect.objectContaining({
            actor: { type: 'system', id: 'temporal' },
            status: 403,
            problem_code: 'decision_unproven',
            detail: expect.objectContaining({
              decision: 'approve',
              claimed_checker_id: forged.checkerId,
            }) as unknown,
          }),
        ),
      ),
    );
    expect(refusals).toHaveLength(2);

    // The approval still takes a real decision, through the API.
    const rejected = await decide(checker.token, approval.id, 'reject', { reason: 'Forgery seen' });
    expect(await rejected.json()).toMatchObject({
      status: 'rejected',
      checker: { id: checker.operator.id },
    });
    expect((await payments()).map((payment) => payment.reference)).not.toContain('DC-F');
  });

  it('shows an approval only to the operators who could decide it and to its maker (issue 37, finding 10)', async () => {
    const asked = (await (await pay(maker.token, 'DC-R')).json()) as ApprovalBody;
    const disburser = await createOperator(stack, ['disbursement']);
    const [admin, otherAdmin] = staff().admins;
    const read = (token: string, path: string) =>
      fetch(`${stack.baseUrl}/ops/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
    const listed = async (token: string) =>
      (await json<{ data: ApprovalBody[] }>(read(token, '/approvals?limit=100'))).data.map(
        (approval) => approval.id,
      );
    // Another desk, KYC and the administrators neither read it nor find it listed.
    for (const token of [reviewer.token, disburser.token, admin.token]) {
      const refused = await read(token, `/approvals/${asked.id}`);
      expect(refused.status).toBe(404);
      expect(await refused.json()).toMatchObject({ code: 'approval_not_found' });
      expect(await listed(token)).not.toContain(asked.id);
    }
    // The payments desk, which decides it, and its maker do.
    for (const token of [checker.token, maker.token]) {
      expect((await read(token, `/approvals/${asked.id}`)).status).toBe(200);
      expect(await listed(token)).toContain(asked.id);
    }
    // The loan's disbursement approval is the disbursement desk's, not the payments desk's.
    const disbursement = (await listed(disburser.token))[0];
    expect(disbursement).toBeDefined();
    expect((await read(disburser.token, `/approvals/${disbursement}`)).status).toBe(200);
    expect((await read(checker.token, `/approvals/${disbursement}`)).status).toBe(404);
    // Staff administration is the administrators' to read, not the desks'.
    const hire = (await (
      await opsRequest(stack, admin.token, '/operators', {
        name: 'New hire',
        email: `hire-${asked.id}@lender.example`,
        roles: ['payments'],
      })
    ).json()) as ApprovalBody;
    expect((await read(otherAdmin.token, `/approvals/${hire.id}`)).status).toBe(200);
    expect((await read(checker.token, `/approvals/${hire.id}`)).status).toBe(404);
    expect(await listed(checker.token)).not.toContain(hire.id);

    await decide(otherAdmin.token, hire.id, 'reject', { reason: 'Not hiring' });
    await decide(checker.token, asked.id, 'reject', { reason: 'Read test' });
  });

  it('records who confirmed the disbursement, who approved it, and when the money went out', async () => {
    const [disbursement] = (await transactions()).filter((item) => item.type === 'disbursement');
    expect(disbursement).toMatchObject({
      recorded_by: { type: 'operator', id: 'break_glass' },
      approved_by: { type: 'operator', id: expect.stringMatching(/^op_/) as unknown },
    });
    // Dated when the maker reported it, not when the checker approved.
    const approved = await json<{ data: ApprovalBody[] }>(
      fetch(`${stack.baseUrl}/ops/v1/approvals?status=approved&limit=100`, {
        headers: { authorization: `Bearer ${OPS_TOKEN}` },
      }),
    );
    const asked = approved.data.find(
      (approval) => approval.kind === 'disbursement' && approval.loan_id === loan.id,
    );
    expect(asked?.request.at).toBe(disbursement!.occurred_at);
  });

  it('never runs what another operator rejects, nor what the maker cannot ask', async () => {
    const asked = (await (await pay(maker.token, 'DC-2')).json()) as ApprovalBody;
    const rejected = await decide(checker.token, asked.id, 'reject', { reason: 'No such Pix' });
    expect(await rejected.json()).toMatchObject({
      status: 'rejected',
      outcome: { reason: 'No such Pix' },
    });
    expect((await decide(checker.token, asked.id, 'approve')).status).toBe(409);
    expect((await payments()).map((payment) => payment.reference)).toEqual(['DC-1']);
    // What the loan's rules refuse is refused to the maker at once: no approval is held.
    const tooMuch = await pay(maker.token, 'DC-3', 999_999_999);
    expect(tooMuch.status).toBe(422);
  });

  it('is held across a worker killed and another started, then runs once approved', async () => {
    // An API whose approvals' workflows run on a task queue of its own, served by processes here.
    const quiet = await startStack({ worker: false, env: { SANDBOX_REVIEW_DELAY: '1h' } });
    try {
      const doomed = await spawnWorkerProcess(quiet);
      const asked = await opsRequest(quiet, maker.token, `/loans/${loan.id}/payments`, {
        amount: 1_000,
        reference: 'DC-5',
      });
      expect(asked.status).toBe(202);
      const { id } = (await asked.json()) as ApprovalBody;
      const handle = quiet.temporal.workflow.getHandle(`approval/${id}`);
      await eventually(async () => {
        const history = await handle.fetchHistory();
        return history.events?.some((event) => event.timerStartedEventAttributes)
          ? true
          : undefined;
      }, 'the approval waiting on its worker');
      doomed.kill('SIGKILL');
      await once(doomed, 'exit');

      const worker = await quiet.startWorker();
      try {
        // The new worker takes the decision once the dead one's sticky queue times out (about
        // 10 s): until then the checker is answered 503 and retries, as Retry-After says.
        await eventually(async () => {
          const decided = await opsRequest(quiet, checker.token, `/approvals/${id}/approve`);
          if (decided.status === 503) return undefined;
          return ((await decided.json()) as ApprovalBody).status === 'approved' ? true : undefined;
        }, 'the decision taken by the new worker');
      } finally {
        await worker.stop();
      }
      const references = (await payments()).map((payment) => payment.reference);
      expect(references.filter((reference) => reference === 'DC-5')).toHaveLength(1);
    } finally {
      await quiet.stop();
    }
  }, 180_000);

  it('expires when nobody decides in time', async () => {
    // An API whose approvals last 2 s, on the same worker and loan.
    const brief = await startStack({
      worker: false,
      taskQueue: stack.config.temporal.taskQueue,
      env: { APPROVAL_TTL: '2s', SANDBOX_REVIEW_DELAY: '1h' },
    });
    try {
      const asked = await opsRequest(brief, maker.token, `/loans/${loan.id}/payments`, {
        amount: 1_000,
        reference: 'DC-4',
      });
      const { id } = (await asked.json()) as ApprovalBody;
      const expired = await eventually(async () => {
        const current = await json<ApprovalBody>(
          fetch(`${stack.baseUrl}/ops/v1/approvals/${id}`, {
            headers: { authorization: `Bearer ${checker.token}` },
          }),
        );
        return current.status === 'expired' ? current : undefined;
      }, 'the approval to expire');
      expect(expired.checker).toBeNull();
      const late = await decide(checker.token, id, 'approve');
      expect(late.status).toBe(409);
      expect((await payments()).map((payment) => payment.reference)).not.toContain('DC-4');
    } finally {
      await brief.stop();
    }
  });
});
