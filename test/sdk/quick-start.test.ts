import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeCpf } from '../helpers/customers.js';
import { createPartner, type TestPartner } from '../helpers/partners.js';
import { startStack, type TestStack } from '../helpers/stack.js';

/* The SDK's quick start (sdk/typescript/examples/quick-start.ts), run as its README says. */
const example = fileURLToPath(
  new URL('../../sdk/typescript/examples/quick-start.ts', import.meta.url),
);
let stack: TestStack;
let partner: TestPartner;

beforeAll(async () => {
  // The example's review approves the customer; an automatic one would race it.
  stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1h' } });
  partner = await createPartner(stack, 'SDK quick start');
});
afterAll(async () => {
  await stack?.stop();
});

describe('the SDK quick start', () => {
  it('takes a new customer to a loan paid by Pix', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', example, fakeCpf({ notStartingWith9: true })],
      {
        env: {
          ...process.env,
          EMBEDDED_CREDIT_API_URL: stack.baseUrl,
          EMBEDDED_CREDIT_CLIENT_ID: partner.credentials.sandbox.client_id,
          EMBEDDED_CREDIT_CLIENT_SECRET: partner.credentials.sandbox.client_secret,
        },
        timeout: 50_000,
      },
    );
    expect(stdout).toMatch(/^ln_[0-9a-f]{32} finished: paid \d+ centavos by Pix\n$/);
  });
});
