import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  activeCustomer,
  activeLoan,
  offerOf,
  type LoanBody,
  type OfferBody,
} from '../helpers/credit.js';
import {
  fakeCpf,
  files,
  registerCustomer,
  upload,
  type CustomerBody,
} from '../helpers/customers.js';
import { createOperator, type TestOperator } from '../helpers/operators.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { advanceSandboxClock } from '../helpers/sandbox-clock.js';

const DAY = 86_400_000;

let stack: TestStack;
let api: Client;
let admin: TestOperator;
/** Every log line the API and the worker write, as written. */
const logLines: string[] = [];

/*
 * Contract §15, "Erasure": what an erasure leaves in PostgreSQL, the object store, the events,
 * Temporal and the logs, for a customer without loans, one whose loan is finished (kept for the
 * law, then erased on its clock) and a denied applicant's documents.
 */
beforeAll(async () => {
  stack = await startStack({
    env: {
      SANDBOX_REVIEW_DELAY: '1h',
      SANDBOX_DISBURSEMENT_DELAY: '1h',
      RETENTION_AFTER_LOAN_END: '30d',
      DENIED_DOCUMENT_RETENTION: '10d',
      LOG_LEVEL: 'debug',
    },
    logDestination: { write: (line: string) => void logLines.push(line) },
  });
  const partner = await createPartner(stack);
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
  admin = await createOperator(stack, ['admin']);
});
afterAll(async () => {
  await stack?.stop();
});

interface ErasureBody {
  customer_id: string;
  status: 'erasing' | 'retained' | 'completed';
  requested_by: { type: string; id: string };
  erased_at: string;
  retained_until: string | null;
  files_deleted_at: string | null;
  completed_at: string | null;
  re_registered_as: string[];
}

/** A person's data, each value found nowhere else in the run's database. */
function person() {
  const tag = randomUUID().slice(0, 8);
  return {
    name: `Joana Apagada ${tag}`,
    email: `joana.${tag}@example.com`,
    phone: `+55119${String(randomInt(10_000_000, 100_000_000))}`,
    trading_name: `Padaria ${tag}`,
    external_id: `crm-${tag}`,
  };
}

const erase = (customerId: string, token = admin.token) =>
  fetch(`${stack.baseUrl}/ops/v1/customers/${customerId}/erasure`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });

const erasureOf = async (customerId: string) =>
  json<ErasureBody>(
    fetch(`${stack.baseUrl}/ops/v1/customers/${customerId}/erasure`, {
      headers: { authorization: `Bearer ${admin.token}` },
    }),
  );

const erasureReaches = (customerId: string, status: ErasureBody['status']) =>
  eventually(
    async () => {
      const erasure = await erasureOf(customerId);
      return erasure.status === status ? erasure : undefined;
    },
    `the erasure of ${customerId} to be ${status}`,
    60_000,
  );

/** The tables of the database with a row whose text holds `needle` (every table, every column). */
async function tablesHolding(needle: string): Promise<string[]> {
  const tables = await stack.database.sql<{ name: string }[]>`
    select tablename as name from pg_tables where schemaname = 'public' order by tablename`;
  const holding: string[] = [];
  for (const { name } of tables) {
    const [row] = await stack.database.sql<{ found: boolean }[]>`
      select exists (select from ${stack.database.sql(name)} t where strpos(t::text, ${needle}) > 0) as found`;
    if (row!.found) holding.push(name);
  }
  return holding;
}

/** Every event of the partner's sandbox about the customer (its own, its offers', its loans'). */
async function eventsAbout(customerId: string): Promise<{ type: string; data: unknown }[]> {
  const about: { type: string; data: { id?: string; customer_id?: string } }[] = [];
  for (let after = ''; ;) {
    const page = await json<{
      data: { id: string; type: string; data: { id?: string; customer_id?: string } }[];
      has_more: boolean;
    }>(api(`/v3/events?order=asc&limit=100${after && `&starting_after=${after}`}`));
    about.push(
      ...page.data.filter((e) => e.data.id === customerId || e.data.customer_id === customerId),
    );
    if (!page.has_more) return about;
    after = page.data.at(-1)!.id;
  }
}

async function storageKeysOf(customerId: string): Promise<string[]> {
  const rows = await stack.database.sql<{ key: string }[]>`
    select storage_key as key from documents where customer_id = ${customerId}`;
  return rows.map((row) => row.key);
}

async function stored(key: string): Promise<boolean> {
  const file = await stack.files.open(key);
  file?.body.destroy();
  return file !== undefined;
}

/** The customer's sandbox clock to `to`, everything it moves caught up. */
const advanceClock = (customerId: string, to: Date) => advanceSandboxClock(api, customerId, to);

/**
 * Every payload of a workflow's history sealed under a customer's data key, sent to the codec
 * endpoint (as the Temporal UI sends them): its status, and the text of what it answered.
 */
async function decodeCustomerPayloads(workflowId: string) {
  const found: unknown[] = [];
  const walk = (value: unknown): void => {
    if (!value || typeof value !== 'object' || value instanceof Uint8Array) return;
    const { metadata } = value as { metadata?: Record<string, Uint8Array> };
    if (metadata?.['customer-key-id']) found.push(value);
    else for (const child of Object.values(value)) walk(child);
  };
  walk(await stack.temporal.workflow.getHandle(workflowId).fetchHistory());
  const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
  const response = await fetch(`${stack.baseUrl}/ops/v1/temporal-codec/decode`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${OPS_TOKEN}`,
      'content-type': 'application/json',
      'x-workflow-id': workflowId,
    },
    body: JSON.stringify({
      payloads: (found as { metadata: Record<string, Uint8Array>; data: Uint8Array }[]).map(
        (payload) => ({
          metadata: Object.fromEntries(
            Object.entries(payload.metadata).map(([key, bytes]) => [key, base64(bytes)]),
          ),
          data: base64(payload.data),
        }),
      ),
    }),
  });
  const body = (await response.json()) as {
    payloads?: { data: string }[];
    errors?: { message: string }[];
  };
  return {
    count: found.length,
    status: response.status,
    text: (body.payloads ?? []).map((p) => Buffer.from(p.data, 'base64').toString()).join('\n'),
    errors: (body.errors ?? []).map((e) => e.message),
  };
}

async function workflowStatus(workflowId: string): Promise<string> {
  return (await stack.temporal.workflow.getHandle(workflowId).describe()).status.name;
}

describe('a customer without loans', () => {
  it('is anonymized at once, its files and workflows gone, and recognized when registered again', async () => {
    const data = person();
    const customer = await registerCustomer(api, data);
    for (const type of ['identity_card_front', 'selfie'])
      expect(
        (await upload(api, customer.id, type, { bytes: files.png(), name: `${data.name}.png` }))
          .status,
      ).toBe(201);
    const keys = await eventually(async () => {
      const found = await storageKeysOf(customer.id);
      return found.length === 2 ? found : undefined;
    }, 'the documents to be recorded');
    for (const key of keys) expect(await stored(key)).toBe(true);
    expect((await tablesHolding(data.email)).length).toBeGreaterThan(0);
    // Its onboarding's history in Temporal holds its documents' file names (its name), sealed
    // under its data key: staff read them through the codec endpoint, as another customer's.
    const onboarding = `customer-onboarding/${customer.id}`;
    const before = await decodeCustomerPayloads(onboarding);
    expect(before).toMatchObject({ status: 200, errors: [] });
    expect(before.count).toBeGreaterThan(2);
    expect(before.text).toContain(data.name);
    const other = person();
    const otherCustomer = await registerCustomer(api, other);
    expect(
      (
        await upload(api, otherCustomer.id, 'selfie', {
          bytes: files.png(),
          name: `${other.name}.png`,
        })
      ).status,
    ).toBe(201);

    // Only an administrator erases.
    const reviewer = await createOperator(stack, ['kyc_reviewer']);
    expect((await erase(customer.id, reviewer.token)).status).toBe(403);

    const erasedFromLine = logLines.length;
    const response = await erase(customer.id);
    expect(response.status).toBe(201);
    const erasure = (await response.json()) as ErasureBody;
    expect(erasure).toMatchObject({
      customer_id: customer.id,
      requested_by: { type: 'operator', id: admin.operator.id },
      retained_until: null,
      re_registered_as: [],
    });
    const done = await erasureReaches(customer.id, 'completed');
    expect(done.files_deleted_at).not.toBeNull();
    // Asking again answers the erasure made.
    expect((await erase(customer.id)).status).toBe(200);

    // The partner: the customer is gone (410), out of lists; its events keep ids, not data.
    const gone = await api(`/v3/customers/${customer.id}`);
    expect(gone.status).toBe(410);
    expect(await gone.json()).toMatchObject({
      code: 'customer_erased',
      erased_at: erasure.erased_at,
    });
    expect((await api(`/v3/customers/${customer.id}/documents`)).status).toBe(404);
    const listed = await json<{ data: CustomerBody[] }>(api(`/v3/customers?cpf=${customer.cpf}`));
    expect(listed.data).toEqual([]);
    const events = await eventsAbout(customer.id);
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining(['customer.created', 'customer.erased']),
    );
    const created = events.find((event) => event.type === 'customer.created')!;
    expect(created.data).toMatchObject({
      id: customer.id,
      name: '[erased]',
      cpf: '[erased]',
      external_id: '[erased]',
    });

    // No trace in any table, object or workflow.
    for (const needle of [
      customer.cpf,
      data.name,
      data.email,
      data.phone,
      data.trading_name,
      data.external_id,
    ])
      expect({ needle, tables: await tablesHolding(needle) }).toEqual({ needle, tables: [] });
    for (const key of keys) expect(await stored(key)).toBe(false);
    expect(JSON.stringify(events)).not.toContain(data.email);
    expect(await workflowStatus(`customer-onboarding/${customer.id}`)).toBe('TERMINATED');
    expect(await workflowStatus(`customer-erasure/${customer.id}`)).toBe('COMPLETED');

    // Its histories no longer open anywhere: the key they were sealed under is destroyed (a copy
    // of the history, a backup, an archive, is as unreadable). Another customer's still open.
    const after = await decodeCustomerPayloads(onboarding);
    expect(after).toMatchObject({ count: before.count, status: 422, text: '' });
    expect(after.errors).toHaveLength(before.count);
    for (const message of after.errors)
      expect(message).toMatch(
        new RegExp(
          `customer data key "cdk_\\w+": .* was destroyed when customer ${customer.id} was erased`,
        ),
      );
    const others = await decodeCustomerPayloads(`customer-onboarding/${otherCustomer.id}`);
    expect(others).toMatchObject({ status: 200, errors: [] });
    expect(others.text).toContain(other.name);
    // The application's own role cannot bring the key back, nor remove its row to get a new one.
    for (const statement of [
      stack.database
        .sql`update customer_data_keys set wrapped_key = 'v1.dev.AAAA', destroyed_at = null where customer_id = ${customer.id}`,
      stack.database.sql`delete from customer_data_keys where customer_id = ${customer.id}`,
    ])
      await expect(statement).rejects.toThrow('a key is destroyed once, and kept destroyed');

    // Nothing written to the logs since names the person (and lines were written: the erasure's).
    const since = logLines.slice(erasedFromLine).join('\n');
    expect(since).toContain(customer.id);
    for (const needle of [customer.cpf, data.name, data.email, data.phone])
      expect(since).not.toContain(needle);

    // The audit names the administrator.
    const audit = await json<{
      data: { operation_id: string; actor: { id: string }; status: number }[];
    }>(
      fetch(`${stack.baseUrl}/ops/v1/audit?operation_id=eraseCustomer&limit=100`, {
        headers: { authorization: `Bearer ${OPS_TOKEN}` },
      }),
    );
    expect(audit.data).toContainEqual(
      expect.objectContaining({
        operation_id: 'eraseCustomer',
        actor: { type: 'operator', id: admin.operator.id },
        status: 201,
      }),
    );

    // The same identity registered again is a new customer, recognized as the erased one's.
    const again = await registerCustomer(api, { ...person(), cpf: customer.cpf });
    expect(again.id).not.toBe(customer.id);
    expect((await erasureOf(customer.id)).re_registered_as).toEqual([again.id]);
  }, 180_000);

  it('withdraws an available offer and ends the offers workflow', async () => {
    const customer = await activeCustomer(stack, api, person());
    const offer = await offerOf(api, customer.id);
    expect(await workflowStatus(`credit-offers/${customer.id}`)).toBe('RUNNING');

    expect((await erase(customer.id)).status).toBe(201);
    await erasureReaches(customer.id, 'completed');
    expect(await json<OfferBody>(api(`/v3/credit-offers/${offer.id}`))).toMatchObject({
      status: 'cancelled',
    });
    expect(await workflowStatus(`credit-offers/${customer.id}`)).toBe('TERMINATED');
    const cancelled = (await eventsAbout(customer.id)).filter(
      (event) => event.type === 'credit_offer.cancelled',
    );
    expect(cancelled).toHaveLength(1);
  }, 120_000);
});

describe('a customer whose loans never became contracts (issue 37, finding 4)', () => {
  it('loses them at once — signers, payout key, reason — and nobody reads them again; so do a denial’s reason and a review’s message', async () => {
    const data = person();
    const customer = await activeCustomer(stack, api, data);
    const offer = await offerOf(api, customer.id);
    const simulation = await json<{ id: string }>(
      api(`/v3/credit-offers/${offer.id}/simulations`, {
        method: 'POST',
        body: { amount: offer.min_amount, installments: 3 },
      }),
      201,
    );
    const guarantor = { name: `Fiadora ${data.name}`, cpf: fakeCpf(), email: `g.${data.email}` };
    const pixKey = `pix.${data.email}`;
    const loan = await json<LoanBody>(
      api('/v3/loans', {
        method: 'POST',
        body: {
          credit_offer_id: offer.id,
          simulation_id: simulation.id,
          disbursement_account: { type: 'pix', pix_key: pixKey },
          signers: [guarantor],
        },
      }),
      201,
    );
    // Cancelled before anyone signed: no contract ever formed.
    const reason = `A fiadora ${guarantor.name} desistiu`;
    const cancelled = await json<LoanBody>(
      api(`/v3/loans/${loan.id}/cancel`, { method: 'POST', body: { reason } }),
    );
    expect(cancelled).toMatchObject({ status: 'cancelled', cancellation_reason: reason });
    const contractKey = (
      await stack.database.sql<
        { key: string }[]
      >`select contract_key as key from loans where id = ${loan.id}`
    )[0]!.key;
    expect(await stored(contractKey)).toBe(true);
    expect(await tablesHolding(guarantor.cpf)).not.toEqual([]);

    expect((await erase(customer.id)).status).toBe(201);
    // Nothing is kept for the law, so nothing waits.
    const done = await erasureReaches(customer.id, 'completed');
    expect(done.retained_until).toBeNull();

    // The partner reads it no more: not by id, not in a list, not its contract.
    for (const path of [`/v3/loans/${loan.id}`, `/v3/loans/${loan.id}/contract`])
      expect((await api(path)).status).toBe(404);
    const listed = await json<{ data: { id: string }[] }>(api(`/v3/loans?limit=100`));
    expect(listed.data.map((l) => l.id)).not.toContain(loan.id);
    expect(await stored(contractKey)).toBe(false);
    for (const needle of [
      customer.cpf,
      guarantor.cpf,
      guarantor.name,
      guarantor.email,
      pixKey,
      reason,
      data.name,
      data.email,
    ])
      expect({ needle, tables: await tablesHolding(needle) }).toEqual({ needle, tables: [] });
    // Its events keep what happened, with the codes.
    const events = await eventsAbout(customer.id);
    const loanCancelled = events.find((event) => event.type === 'loan.cancelled');
    expect(loanCancelled?.data).toMatchObject({ id: loan.id, cancellation_reason: '[erased]' });

    // A denied applicant: the denial's reason and a review's message to them name them too.
    const denied = await registerCustomer(api, person());
    expect(
      (await upload(api, denied.id, 'selfie', { bytes: files.png(), name: 'selfie.png' })).status,
    ).toBe(201);
    await eventually(
      async () => (await storageKeysOf(denied.id)).length === 1 || undefined,
      'the selfie to be recorded',
    );
    const message = `A selfie não mostra ${denied.name}`;
    expect(
      (
        await api(`/v3/sandbox/customers/${denied.id}/review`, {
          method: 'POST',
          body: { items: [{ type: 'selfie', decision: 'reject', message }] },
        })
      ).status,
    ).toBe(200);
    const deniedReason = `Documento de ${denied.name} adulterado`;
    expect(
      (
        await api(`/v3/sandbox/customers/${denied.id}/deny`, {
          method: 'POST',
          body: { reason: deniedReason },
        })
      ).status,
    ).toBe(200);
    expect(await tablesHolding(deniedReason)).toEqual(
      expect.arrayContaining(['customers', 'events']),
    );
    expect(await tablesHolding(message)).toContain('events');

    expect((await erase(denied.id)).status).toBe(201);
    await erasureReaches(denied.id, 'completed');
    for (const needle of [deniedReason, message, denied.name])
      expect({ needle, tables: await tablesHolding(needle) }).toEqual({ needle, tables: [] });
    const deniedEvent = (await eventsAbout(denied.id)).find((e) => e.type === 'customer.denied');
    expect(deniedEvent?.data).toMatchObject({ status: 'denied', reason: '[erased]' });
  }, 180_000);
});

describe('a customer whose loan is finished', () => {
  it('keeps the contract and the ledger until the period passes on its clock, then loses them too', async () => {
    const data = person();
    const loan = await activeLoan(stack, api, { opsToken: OPS_TOKEN, customer: data });
    const customerId = loan.customer_id;
    const [signer] = loan.signers;
    const keys = await storageKeysOf(customerId);
    expect(keys.length).toBeGreaterThan(0);

    // A loan in force refuses the erasure.
    const inForce = await erase(customerId);
    expect(inForce.status).toBe(409);
    expect(((await inForce.json()) as { detail: string }).detail).toContain(loan.id);

    const finished = await json<{ status: string; updated_at: string }>(
      api(`/v3/sandbox/loans/${loan.id}/payoff`, { method: 'POST', body: {} }),
    );
    expect(finished.status).toBe('finished');
    const contractKey = (
      await stack.database.sql<
        { key: string }[]
      >`select contract_key as key from loans where id = ${loan.id}`
    )[0]!.key;

    expect((await erase(customerId)).status).toBe(201);
    const retained = await erasureReaches(customerId, 'retained');
    const until = new Date(retained.retained_until!).getTime();
    expect(until - new Date(finished.updated_at).getTime()).toBeGreaterThanOrEqual(30 * DAY);
    expect(until - new Date(finished.updated_at).getTime()).toBeLessThan(30 * DAY + 60_000);

    // Kept: the contract, its signer and the ledger. Gone: the rest.
    expect(await stored(contractKey)).toBe(true);
    const kept = await json<{ status: string; signers: { name: string; cpf: string }[] }>(
      api(`/v3/loans/${loan.id}`),
    );
    expect(kept).toMatchObject({
      status: 'finished',
      signers: [{ name: signer!.name, cpf: signer!.cpf }],
    });
    const ledger = await json<{ data: unknown[] }>(api(`/v3/loans/${loan.id}/transactions`));
    expect(ledger.data.length).toBeGreaterThanOrEqual(2);
    expect((await api(`/v3/customers/${customerId}`)).status).toBe(410);
    for (const key of keys) expect(await stored(key)).toBe(false);
    expect(await tablesHolding(signer!.cpf)).toEqual(['loan_signers']);
    expect(await tablesHolding(data.name)).toEqual(['loan_signers']);
    // The signer's record (where the signing code went) and the payout's (the pix key is the
    // e-mail) keep it with the contract.
    expect(await tablesHolding(data.email)).toEqual(['loan_signers', 'loans']);
    expect(await tablesHolding(data.phone)).toEqual([]);
    expect(JSON.stringify(await eventsAbout(customerId))).not.toContain(data.email);
    expect(JSON.stringify(await eventsAbout(customerId))).not.toContain(signer!.cpf);

    // Not before its time: a day short of the period, everything kept is still there.
    await advanceClock(customerId, new Date(until - DAY));
    expect((await erasureOf(customerId)).status).toBe('retained');
    expect(await stored(contractKey)).toBe(true);

    await advanceClock(customerId, new Date(until + DAY));
    const completed = await erasureReaches(customerId, 'completed');
    expect(completed.completed_at).not.toBeNull();
    for (const needle of [signer!.cpf, data.name, data.email, data.phone])
      expect({ needle, tables: await tablesHolding(needle) }).toEqual({ needle, tables: [] });
    expect(await stored(contractKey)).toBe(false);
    // The ledger stays: amounts and dates, nobody's data.
    expect(
      (await json<{ data: unknown[] }>(api(`/v3/loans/${loan.id}/transactions`))).data,
    ).toEqual(ledger.data);
  }, 240_000);
});

describe("a denied applicant's documents", () => {
  it('are kept for DENIED_DOCUMENT_RETENTION on the clock, then deleted', async () => {
    const customer = await registerCustomer(api, person());
    expect(
      (
        await upload(api, customer.id, 'identity_card_front', {
          bytes: files.png(),
          name: 'rg.png',
        })
      ).status,
    ).toBe(201);
    const keys = await eventually(async () => {
      const found = await storageKeysOf(customer.id);
      return found.length === 1 ? found : undefined;
    }, 'the document to be recorded');
    const denied = await json<{ status: string; updated_at: string }>(
      api(`/v3/sandbox/customers/${customer.id}/deny`, {
        method: 'POST',
        body: { reason: 'Fraud suspected.' },
      }),
    );
    expect(denied.status).toBe('denied');
    const deniedAt = new Date(denied.updated_at).getTime();

    await advanceClock(customer.id, new Date(deniedAt + 9 * DAY));
    expect(await stored(keys[0]!)).toBe(true);
    expect(
      (await json<{ data: unknown[] }>(api(`/v3/customers/${customer.id}/documents`))).data,
    ).toHaveLength(1);

    await advanceClock(customer.id, new Date(deniedAt + 11 * DAY));
    expect(
      (await json<{ data: unknown[] }>(api(`/v3/customers/${customer.id}/documents`))).data,
    ).toEqual([]);
    expect(await stored(keys[0]!)).toBe(false);
    expect(await workflowStatus(`denied-documents/${customer.id}`)).toBe('COMPLETED');
    // The denial itself stands: the customer is still there, denied.
    expect(await json<{ status: string }>(api(`/v3/customers/${customer.id}`))).toMatchObject({
      status: 'denied',
    });
  });
});
