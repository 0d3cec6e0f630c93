import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documents } from '../../src/db/schema/index.js';
import { files, registerCustomer, upload, type CustomerBody } from '../helpers/customers.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { startStack, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
let api: Client;

beforeAll(async () => {
  stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1h' } });
  api = client(stack, await tokenFor(stack, (await createPartner(stack)).credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
});

/** Every key the file store holds. */
async function storedKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const page of stack.files.list()) keys.push(...page.map((file) => file.key));
  return keys;
}

/** Files the store holds for a customer, and document rows: both must stay empty after a refusal. */
async function leftBehind(customerId: string) {
  const stored = (await storedKeys()).filter(
    (key) => key.includes(customerId) && key.split('/').pop()!.startsWith('doc_'),
  );
  const rows = await stack.database.db
    .select()
    .from(documents)
    .where(eq(documents.customerId, customerId));
  return { stored, rows: rows.length };
}

async function expectRefused(response: Response, status: number, code: string, customerId: string) {
  expect(response.status).toBe(status);
  expect(await response.json()).toMatchObject({ code });
  expect(await leftBehind(customerId)).toEqual({ stored: [], rows: 0 });
}

describe('document uploads', () => {
  it('stores an accepted file with its size and SHA-256, readable as a document', async () => {
    const customer = await registerCustomer(api);
    const bytes = files.pdf();
    const response = await upload(api, customer.id, 'selfie', { bytes, name: 'me.pdf' });
    expect(response.status).toBe(201);
    const document = (await response.json()) as Record<string, unknown>;
    expect(document).toMatchObject({
      type: 'selfie',
      status: 'submitted',
      file_name: 'me.pdf',
      content_type: 'application/pdf',
      size_bytes: bytes.length,
    });
    expect(document.sha256).toMatch(/^[0-9a-f]{64}$/);
    const fetched = await api(response.headers.get('location')!);
    expect(await fetched.json()).toEqual(document);
    const { stored } = await leftBehind(customer.id);
    expect(stored).toHaveLength(1);
  });

  it('takes the /kyc-attachments alias, and a CNH in place of the identity cards', async () => {
    const customer = await registerCustomer(api);
    expect(
      (
        await upload(
          api,
          customer.id,
          'cnh',
          { bytes: files.jpeg(), name: 'cnh.jpg' },
          'kyc-attachments',
        )
      ).status,
    ).toBe(201);
    const after = (await (await api(`/v3/customers/${customer.id}`)).json()) as CustomerBody;
    expect(after.kyc.map((i) => i.type)).toEqual(['cnh', 'selfie', 'biometrics']);
  });

  it('refuses a file over 10 MiB with 413, leaving nothing behind', async () => {
    const customer = await registerCustomer(api);
    const big = Buffer.concat([files.pdf(), Buffer.alloc(10 * 1024 * 1024 + 1, 0x20)]);
    await expectRefused(
      await upload(api, customer.id, 'selfie', { bytes: big, name: 'big.pdf' }),
      413,
      'payload_too_large',
      customer.id,
    );
  });

  it('judges the file by its content: a renamed executable is 415 unsupported_file_type', async () => {
    const customer = await registerCustomer(api);
    const response = await upload(api, customer.id, 'selfie', {
      bytes: files.exe(),
      name: 'selfie.png',
      mime: 'image/png',
    });
    await expectRefused(response, 415, 'unsupported_file_type', customer.id);
  });

  it('refuses a document type the customer does not owe with 409, one that is no document type with 422, and reports a missing file too', async () => {
    const customer = await registerCustomer(api);
    // A real document type (the schema's enum admits it) that is not among this customer's items:
    // refused for the customer's state, like an item that is not open (contract §5).
    await expectRefused(
      await upload(api, customer.id, 'ccmei', { bytes: files.pdf(), name: 'ccmei.pdf' }),
      409,
      'invalid_state',
      customer.id,
    );
    const passport = await upload(api, customer.id, 'passport', {
      bytes: files.pdf(),
      name: 'passport.pdf',
    });
    expect(passport.status).toBe(422);
    expect(await passport.json()).toMatchObject({
      code: 'validation_error',
      errors: [{ path: 'body.type', code: 'invalid_value' }],
    });
    expect(await leftBehind(customer.id)).toEqual({ stored: [], rows: 0 });
    const both = await upload(api, customer.id, undefined, undefined);
    expect(both.status).toBe(422);
    const problem = (await both.json()) as { errors: { path: string }[] };
    expect(problem.errors.map((e) => e.path).sort()).toEqual(['body.file', 'body.type']);
  });

  it('refuses an item that is not open with 409 invalid_state', async () => {
    const customer = await registerCustomer(api);
    expect(
      (await upload(api, customer.id, 'selfie', { bytes: files.png(), name: 'a.png' })).status,
    ).toBe(201);
    const second = await upload(api, customer.id, 'selfie', { bytes: files.png(), name: 'b.png' });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ code: 'invalid_state' });
    const { stored, rows } = await leftBehind(customer.id);
    expect({ stored: stored.length, rows }).toEqual({ stored: 1, rows: 1 });
  });

  it('refuses uploads for a denied customer with 409, leaving nothing behind', async () => {
    const customer = await registerCustomer(api);
    await api(`/v3/sandbox/customers/${customer.id}/deny`, {
      method: 'POST',
      body: { reason: 'Fraud.' },
    });
    await expectRefused(
      await upload(api, customer.id, 'selfie', { bytes: files.png(), name: 'a.png' }),
      409,
      'invalid_state',
      customer.id,
    );
  });

  it('refuses another media type than multipart with 415, and an unknown customer with 404', async () => {
    const customer = await registerCustomer(api);
    const json = await api(`/v3/customers/${customer.id}/documents`, {
      method: 'POST',
      body: { type: 'selfie' },
    });
    expect(json.status).toBe(415);
    const missing = await upload(api, `cust_${'0'.repeat(32)}`, 'selfie', {
      bytes: files.png(),
      name: 'a.png',
    });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'customer_not_found' });
  });

  it('replays an upload sent twice with one Idempotency-Key, storing one document', async () => {
    const customer = await registerCustomer(api);
    const send = () =>
      upload(api, customer.id, 'selfie', { bytes: files.png(), name: 'a.png' }, 'documents', {
        'Idempotency-Key': `up-${customer.id}`,
      });
    const first = await send();
    const second = await send();
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.json()).toEqual(await first.json());
    expect((await leftBehind(customer.id)).rows).toBe(1);
  });
});

describe('the object store', () => {
  it('keeps each file under ids only (partner/environment/customer/document)', async () => {
    const customer = await registerCustomer(api);
    await upload(api, customer.id, 'selfie', { bytes: files.png(), name: 'a.png' });
    const mine = (await storedKeys()).filter((key) => key.includes(customer.id));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatch(new RegExp(`^ptn_[0-9a-f]+/sandbox/${customer.id}/doc_[0-9a-f]+$`));
  });
});
