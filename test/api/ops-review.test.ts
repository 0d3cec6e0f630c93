import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customers } from '../../src/db/schema/index.js';
import { files, registerCustomer, upload, type CustomerBody } from '../helpers/customers.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { completeBiometricsCapture } from '../helpers/hosted.js';

let stack: TestStack;
let production: Client;

beforeAll(async () => {
  stack = await startStack();
  production = client(
    stack,
    await tokenFor(stack, (await createPartner(stack)).credentials.production),
  );
});
afterAll(async () => {
  await stack?.stop();
});

const ops = (path: string, body: unknown, token = OPS_TOKEN) =>
  fetch(`${stack.baseUrl}/ops/v1${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

async function submittedCustomer(): Promise<CustomerBody> {
  const customer = await registerCustomer(production);
  for (const type of ['identity_card_front', 'identity_card_back', 'selfie']) {
    expect(
      (await upload(production, customer.id, type, { bytes: files.pdf(), name: `${type}.pdf` }))
        .status,
    ).toBe(201);
  }
  const session = (await (
    await production(`/v3/customers/${customer.id}/biometrics`, { method: 'POST' })
  ).json()) as {
    session_url: string;
  };
  // Production has no published code: the customer's own, from the mailbox.
  const captured = await completeBiometricsCapture(stack.baseUrl, session.session_url, {
    email: customer.email,
  });
  expect(captured.status).toBe(200);
  return (await (await production(`/v3/customers/${customer.id}`)).json()) as CustomerBody;
}

describe('ops review of production customers', () => {
  it('waits for ops in production, then approves to active', async () => {
    const customer = await submittedCustomer();
    expect(customer.status).toBe('under_review');
    const all = ['identity_card_front', 'identity_card_back', 'selfie', 'biometrics'];

    const reviewed = await ops(`/customers/${customer.id}/review`, {
      items: all.map((type) => ({ type, decision: 'approve' })),
    });
    expect(reviewed.status).toBe(200);
    expect(await reviewed.json()).toMatchObject({ id: customer.id, status: 'active' });
    const seen = (await (await production(`/v3/customers/${customer.id}`)).json()) as CustomerBody;
    expect(seen.status).toBe('active');

    // Production's credit analysis waits for a person: no bureau is integrated.
    const row = await eventually(
      async () =>
        (
          await stack.database.db.query.customers.findFirst({
            where: eq(customers.id, customer.id),
          })
        )?.creditAnalysis ?? undefined,
      'the credit analysis',
    );
    expect(row.status).toBe('manual_review_required');
    const offers = async () =>
      (
        (await (await production(`/v3/customers/${customer.id}/credit-offers`)).json()) as {
          data: { status: string; approved_amount: number }[];
        }
      ).data;
    expect(await offers()).toEqual([]);

    // Ops decide: a limit within bounds, once.
    for (const body of [
      { decision: 'approve' },
      { decision: 'approve', approved_limit_amount: 2_500_000, max_installments: 361 },
      { decision: 'approve', approved_limit_amount: 2_500_000, max_installments: 2 },
      { decision: 'approve', approved_limit_amount: 49_999 },
      { decision: 'approve', approved_limit_amount: 100_000_001 },
      { decision: 'approve', approved_limit_amount: 2_500_000, reason: 'extra' },
      { decision: 'reject' },
      { decision: 'maybe' },
    ]) {
      const refused = await ops(`/customers/${customer.id}/credit-decision`, body);
      expect({ body, status: refused.status }).toEqual({ body, status: 422 });
    }
    const approved = await ops(`/customers/${customer.id}/credit-decision`, {
      decision: 'approve',
      approved_limit_amount: 2_500_000,
    });
    expect(approved.status).toBe(200);
    // Already active: the offer follows the decision.
    const [offer] = await eventually(async () => {
      const current = await offers();
      return current.length > 0 ? current : undefined;
    }, 'the offer after the credit decision');
    expect(offer).toMatchObject({ status: 'available', approved_amount: 2_500_000 });
    const again = await ops(`/customers/${customer.id}/credit-decision`, {
      decision: 'reject',
      reason: 'Second thoughts.',
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: 'invalid_state' });
  });

  it('a credit decision before the review gives the customer its offer when activated; a rejection none', async () => {
    const all = ['identity_card_front', 'identity_card_back', 'selfie', 'biometrics'];
    const approve = { items: all.map((type) => ({ type, decision: 'approve' })) };
    const offersOf = async (id: string) =>
      (
        (await (await production(`/v3/customers/${id}/credit-offers`)).json()) as {
          data: { approved_amount: number }[];
        }
      ).data;
    const decide = async (id: string, body: Record<string, unknown>) =>
      eventually(async () => {
        const response = await ops(`/customers/${id}/credit-decision`, body);
        return response.status === 409 ? undefined : response.status; // the analysis still runs
      }, 'the credit decision');

    const early = await submittedCustomer();
    // A decision may lengthen the term past the table's: up to 360 months.
    expect(
      await decide(early.id, {
        decision: 'approve',
        approved_limit_amount: 1_000_000,
        max_installments: 360,
      }),
    ).toBe(200);
    expect((await ops(`/customers/${early.id}/review`, approve)).status).toBe(200);
    const [offer] = await eventually(async () => {
      const current = await offersOf(early.id);
      return current.length > 0 ? current : undefined;
    }, 'the offer at activation');
    expect(offer?.approved_amount).toBe(1_000_000);
    const longest = (await (
      await production(`/v3/customers/${early.id}/credit-offers`)
    ).json()) as {
      data: { id: string; max_installments: number }[];
    };
    expect(longest.data[0]?.max_installments).toBe(360);
    const simulated = await production(`/v3/credit-offers/${longest.data[0]!.id}/simulations`, {
      method: 'POST',
      body: { amount: 1_000_000, installments: 360 },
    });
    expect(simulated.status).toBe(201);
    const simulation = (await simulated.json()) as { id: string; schedule: unknown[] };
    expect(simulation.schedule).toHaveLength(360);
    // A 30-year loan is taken like any other (its CCB's 360 rows: test/unit/contract-pdf.test.ts).
    const loan = await production('/v3/loans', {
      method: 'POST',
      body: {
        credit_offer_id: longest.data[0]!.id,
        simulation_id: simulation.id,
        disbursement_account: { type: 'pix', pix_key: early.email },
      },
    });
    expect(loan.status).toBe(201);
    const { id: loanId } = (await loan.json()) as { id: string };
    const contract = await production(`/v3/loans/${loanId}/contract`);
    expect(contract.status).toBe(200);
    expect(contract.headers.get('content-type')).toBe('application/pdf');
    expect(
      ((await (await production(`/v3/loans/${loanId}`)).json()) as { schedule: unknown[] })
        .schedule,
    ).toHaveLength(360);

    const rejected = await submittedCustomer();
    expect(await decide(rejected.id, { decision: 'reject', reason: 'Income too low.' })).toBe(200);
    expect((await ops(`/customers/${rejected.id}/review`, approve)).status).toBe(200);
    // Its offers workflow ends with nothing to offer.
    const run = stack.temporal.workflow.getHandle(`credit-offers/${rejected.id}`);
    expect(await eventually(() => run.result().catch(() => undefined), 'the offers run')).toBe(
      'not_eligible',
    );
    expect(await offersOf(rejected.id)).toEqual([]);

    // The sandbox decides its own credit: nothing waits for ops there.
    const sandbox = client(
      stack,
      await tokenFor(stack, (await createPartner(stack)).credentials.sandbox),
    );
    const sandboxCustomer = await registerCustomer(sandbox);
    const refused = await eventually(async () => {
      const response = await ops(`/customers/${sandboxCustomer.id}/credit-decision`, {
        decision: 'approve',
        approved_limit_amount: 1_000_000,
      });
      const problem = (await response.json()) as { code: string; detail: string };
      return problem.detail.includes('not run yet')
        ? undefined
        : { status: response.status, ...problem };
    }, 'the sandbox analysis');
    expect(refused).toMatchObject({ status: 409, code: 'invalid_state' });
    expect(
      (
        await ops(`/customers/cust_${'0'.repeat(32)}/credit-decision`, {
          decision: 'reject',
          reason: 'x',
        })
      ).status,
    ).toBe(404);
  });

  it('refuses decisions on items not submitted or not owed (409) and on no item type at all (422)', async () => {
    const customer = await registerCustomer(production);
    const notSubmitted = await ops(`/customers/${customer.id}/review`, {
      items: [{ type: 'selfie', decision: 'approve' }],
    });
    expect(notSubmitted.status).toBe(409);
    expect(await notSubmitted.json()).toMatchObject({ code: 'invalid_state' });
    // A real item type this customer does not owe (it has no cnh, nor an e-mail correction).
    for (const type of ['cnh', 'email']) {
      const notOwed = await ops(`/customers/${customer.id}/review`, {
        items: [{ type, decision: 'approve' }],
      });
      expect({ type, status: notOwed.status }).toEqual({ type, status: 409 });
      expect(await notOwed.json()).toMatchObject({ code: 'invalid_state' });
    }
    const unknown = await ops(`/customers/${customer.id}/review`, {
      items: [{ type: 'passport', decision: 'approve' }],
    });
    expect(unknown.status).toBe(422);
    // Only a field can be corrected: the schema says so per decision.
    const notAField = await ops(`/customers/${customer.id}/review`, {
      items: [{ type: 'selfie', decision: 'request_correction' }],
    });
    expect(notAField.status).toBe(422);
    const badBody = await ops(`/customers/${customer.id}/review`, {
      items: [{ type: 'selfie', decision: 'maybe' }],
    });
    expect(badBody.status).toBe(422);
  });

  it('denies from any status, finally, and answers unknown customers and missing tokens', async () => {
    const customer = await submittedCustomer();
    const denied = await ops(`/customers/${customer.id}/deny`, { reason: 'Document fraud.' });
    expect(denied.status).toBe(200);
    expect(await denied.json()).toMatchObject({ status: 'denied' });
    const events = (await (await production('/v3/events?type=customer.denied')).json()) as {
      data: { data: Record<string, unknown> }[];
    };
    expect(events.data.map((e) => e.data)).toContainEqual({
      id: customer.id,
      status: 'denied',
      external_id: null,
      reason: 'Document fraud.',
    });
    expect((await ops(`/customers/${customer.id}/deny`, { reason: 'Again.' })).status).toBe(409);
    expect((await ops(`/customers/cust_${'0'.repeat(32)}/deny`, { reason: 'x' })).status).toBe(404);
    expect(
      (await ops(`/customers/${customer.id}/deny`, { reason: 'x' }, 'wrong-token-0123456789'))
        .status,
    ).toBe(401);
  });
});
