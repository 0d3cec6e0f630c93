import { Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import { customerDataKeys } from '../../src/db/schema/index.js';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoanInput } from '../../workflows/loan/messages.js';
import { formatCpf } from '../../src/domain/loans/contract-pdf.js';
import { workflowIds } from '../../src/temporal/workflow-ids.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import type { CustomerBody } from '../helpers/customers.js';
import { runsOf } from '../helpers/histories.js';
import { client, createPartner, json, tokenFor, type Client as Api } from '../helpers/partners.js';
import { eventually, OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

/**
 * Contract §15, "Workflow payloads are encrypted": a loan taken through the real stack (customer
 * onboarding, offers, the loan signed and disbursed), then every workflow of its customer read
 * straight from Temporal, as anyone with access to the server (or its UI without the codec) reads
 * it. No cpf, e-mail, phone or name of the customer is there; every payload but the search
 * attributes (ids only) and the SDK's patch markers is ciphertext; the service's own client, with
 * the codec, reads the loan's input back with the cpf.
 */

let stack: TestStack;
let api: Api;
let loan: LoanBody;
let customer: CustomerBody;

beforeAll(async () => {
  stack = await startStack({
    env: { SANDBOX_REVIEW_DELAY: '1h', SANDBOX_DISBURSEMENT_DELAY: '2s' },
  });
  api = client(stack, await tokenFor(stack, (await createPartner(stack)).credentials.sandbox));
  loan = await activeLoan(stack, api, { opsToken: OPS_TOKEN });
  customer = await json<CustomerBody>(api(`/v3/customers/${loan.customer_id}`));
}, 180_000);
afterAll(async () => {
  await stack?.stop();
});

interface Found {
  path: string;
  metadata: Record<string, string>;
  data: Uint8Array;
}

/** Every payload in a history (anything with `metadata` and `data`), with where it sits. */
function payloadsIn(value: unknown, path = '', found: Found[] = []): Found[] {
  if (!value || typeof value !== 'object' || value instanceof Uint8Array) return found;
  if (
    'metadata' in value &&
    'data' in value &&
    value.metadata &&
    typeof value.metadata === 'object'
  )
    found.push({
      path,
      metadata: Object.fromEntries(
        Object.entries(value.metadata as Record<string, Uint8Array>).map(([key, bytes]) => [
          key,
          Buffer.from(bytes).toString(),
        ]),
      ),
      data: (value.data as Uint8Array | null) ?? new Uint8Array(),
    });
  else
    for (const [key, child] of Object.entries(value))
      payloadsIn(child, path ? `${path}.${key}` : key, found);
  return found;
}

/** All text a history holds: its strings, and every byte string read as UTF-8 and Latin-1. */
function textOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value instanceof Uint8Array)
    out.push(Buffer.from(value).toString('utf8'), Buffer.from(value).toString('latin1'));
  else if (value && typeof value === 'object')
    for (const child of Object.values(value)) textOf(child, out);
  return out;
}

describe('workflow payloads read straight from Temporal', () => {
  it('hold no cpf, e-mail, phone or name of a borrower whose loan went through every workflow', async () => {
    // A client without the codec: what the server, its database or its plain UI hold.
    const plain = new Client({
      connection: stack.temporal.connection,
      namespace: stack.config.temporal.namespace,
    });
    const workflowIdsOfCustomer = await eventually(async () => {
      const ids = new Set<string>();
      for await (const execution of plain.workflow.list({
        query: `CustomerId = "${customer.id}"`,
      }))
        ids.add(execution.workflowId);
      return ids.size >= 3 ? [...ids].sort() : undefined;
    }, "the customer's workflows in visibility");
    expect(workflowIdsOfCustomer).toEqual(
      expect.arrayContaining([
        workflowIds.customerOnboarding(customer.id),
        workflowIds.creditOffers(customer.id),
        workflowIds.loan(loan.id),
      ]),
    );

    const personal = {
      cpf: customer.cpf,
      'formatted cpf': formatCpf(customer.cpf),
      'e-mail': customer.email,
      phone: '987654321',
      name: customer.name,
    };
    const [customerKey] = await stack.database.db
      .select()
      .from(customerDataKeys)
      .where(eq(customerDataKeys.customerId, customer.id));
    expect(customerKey?.destroyedAt).toBeNull();
    expect(customerKey?.wrappedKey).toMatch(/^v1\.dev\./);
    const customersOwn = new Set([
      workflowIds.customerOnboarding(customer.id),
      workflowIds.creditOffers(customer.id),
      workflowIds.loan(loan.id),
    ]);
    let encrypted = 0;
    for (const workflowId of workflowIdsOfCustomer) {
      for (const { runId } of await runsOf(plain.workflow, workflowId)) {
        const history = await plain.workflow.getHandle(workflowId, runId).fetchHistory();
        const text = textOf(history).join('\n');
        for (const [what, value] of Object.entries(personal))
          expect(text.includes(value), `${what} in ${workflowId} (${runId})`).toBe(false);

        for (const payload of payloadsIn(history)) {
          const where = `${workflowId}: ${payload.path}`;
          if (payload.path.includes('searchAttributes')) {
            // Ids and environments only: search attributes are never encrypted.
            const values = [JSON.parse(Buffer.from(payload.data).toString()) as unknown].flat();
            // Ids and environments, or the SDK's patch ids (TemporalChangeVersion).
            const shape = payload.path.endsWith('TemporalChangeVersion')
              ? /^[a-z0-9-]+$/
              : /^([a-z]+_[0-9A-Za-z]+|sandbox|production)$/;
            for (const value of values) expect(String(value), where).toMatch(shape);
          } else if (payload.path.includes('markerRecordedEventAttributes')) {
            // The SDK's own patch markers (a patch id), written below the codec.
            expect(payload.metadata.encoding, where).toBe('json/plain');
          } else {
            // The customer's own workflows under its data key (erasure destroys it); any other
            // under the payload key of the deployment.
            expect(payload.metadata, where).toEqual(
              customersOwn.has(workflowId)
                ? { encoding: 'binary/encrypted', 'customer-key-id': customerKey!.id }
                : { encoding: 'binary/encrypted', 'encryption-key-id': 'dev' },
            );
            encrypted++;
          }
        }
      }
    }
    expect(encrypted).toBeGreaterThan(20);

    // The service's client (the codec's) reads the loan's input, cpf and all.
    const [firstRun] = await runsOf(stack.temporal.workflow, workflowIds.loan(loan.id));
    const started = (
      await stack.temporal.workflow
        .getHandle(workflowIds.loan(loan.id), firstRun!.runId)
        .fetchHistory()
    ).events![0]!.workflowExecutionStartedEventAttributes!;
    const input = await decodeFromPayloadsAtIndex<LoanInput>(
      stack.temporal.options.loadedDataConverter,
      0,
      started.input!.payloads,
    );
    expect(input).toMatchObject({ loanId: loan.id, customerId: customer.id });
    expect(input.signerCpfs).toEqual([customer.cpf]);
  });

  it('refuses an Update or a Signal sent straight to Temporal in clear: it never reaches the workflow', async () => {
    // The review's attack: a client of the frontend without the codec (no key, no API).
    const plain = new Client({
      connection: stack.temporal.connection,
      namespace: stack.config.temporal.namespace,
    });
    const transactions = async () =>
      (await json<{ data: unknown[] }>(api(`/v3/loans/${loan.id}/transactions`))).data;
    const before = await transactions();
    const forged = plain.workflow
      .getHandle(workflowIds.loan(loan.id))
      .executeUpdate('record-payment', {
        args: [
          {
            reference: 'forged-by-the-frontend',
            amount: 50_000,
            paidAt: new Date().toISOString(),
            applyTo: 'next',
            stated: { amount: true, paidAt: true },
          },
        ],
      });
    const refusal = await forged.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((refusal as WorkflowUpdateFailedError).cause)).toContain(
      'Unknown encoding: binary/refused-unencrypted',
    );
    expect(await transactions()).toEqual(before);
    // An Update without arguments has no payload for the codec to refuse: the workflow asks its
    // messages to name their record, so a bare claim of the disbursement is refused too.
    const bareClaim = await plain.workflow
      .getHandle(workflowIds.loan(loan.id))
      .executeUpdate('claim-disbursement')
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(bareClaim).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((bareClaim as WorkflowUpdateFailedError).cause)).toContain(
      'A claim names its loan',
    );
    // The loan's workflow is unharmed: the partner's own payment goes through after it.
    const paid = await api(`/v3/sandbox/loans/${loan.id}/payments`, {
      method: 'POST',
      body: { amount: 1_000 },
    });
    expect(paid.status).toBe(200);
    expect(await transactions()).toHaveLength(before.length + 1);

    // A Signal is in the history once sent, so the workflow's task fails on it (visible in the
    // UI) and no handler ever runs it: the offers workflow keeps its offer as it was.
    const offers = plain.workflow.getHandle(workflowIds.creditOffers(customer.id));
    await offers.signal('loanFinished', { offerId: loan.credit_offer_id, loanId: loan.id });
    const failure = await eventually(async () => {
      const events = (await offers.fetchHistory()).events ?? [];
      return events.find((event) => event.workflowTaskFailedEventAttributes)
        ?.workflowTaskFailedEventAttributes?.failure?.message;
    }, 'the offers workflow to fail the task with the forged signal');
    expect(failure).toContain('Unknown encoding: binary/refused-unencrypted');
  });
});
