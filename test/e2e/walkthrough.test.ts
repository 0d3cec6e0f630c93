import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { runScript, walkthroughHome, walkthroughScript } from '../helpers/walkthrough.js';

/*
 * docs/walkthrough-sandbox-customer.md as written: every `sh` block, in order, in one bash,
 * against the real service — and its first twelve sections again on the same data, as a
 * partner's developer would rerun it. The stack is configured as `npm run dev` configures the
 * service (but for shorter sandbox delays, below); the walkthrough reads
 * the demo partner's credentials from `.data/demo-partner.json`, as under `npm run dev`.
 */
let stack: TestStack;
let walkthrough: Awaited<ReturnType<typeof walkthroughHome>>;

beforeAll(async () => {
  stack = await startStack({
    env: {
      // Shorter than the 10 s and 30 s `npm run dev` runs with: the walkthrough polls for the
      // review and the disbursement rather than sleeping, and 5 s still leaves its section 14
      // time to have ops claim a payout before the sandbox does.
      SANDBOX_REVIEW_DELAY: '1s',
      SANDBOX_DISBURSEMENT_DELAY: '5s',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true',
    },
  });
  walkthrough = await walkthroughHome(stack, 'walkthrough');
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await walkthrough?.remove();
});

/** The walkthrough as written, but the last section's receiver (a port of its own). */
const walkthroughScriptOf = (before?: string) =>
  walkthroughScript(
    'walkthrough-sandbox-customer.md',
    (block) => !block.includes('node receiver.mjs'),
    before,
  );

const run = (script: string) =>
  runScript(script, walkthrough.home, {
    API: stack.baseUrl,
    MAIL: inject('mailpitApiUrl'),
    OPS_TOKEN,
    DATABASE_URL: stack.config.databaseUrl,
  });

describe('the sandbox walkthrough', () => {
  /*
   * Then again on the same data, as a partner's developer reruns it: the partner, its credentials
   * and endpoints as the first run left them, a fresh customer. The rerun stops before the sandbox
   * clock's year (sections 13–15, two thirds of a run's CPU, new loans of the new customer only):
   * what a rerun could trip on — a cpf, a credential, an endpoint, a customer's review, a loan to
   * its repayment — is all above it.
   */
  it('runs as written, and again up to the sandbox clock on the same data', async () => {
    for (const [round, script] of [
      [1, await walkthroughScriptOf()],
      [2, await walkthroughScriptOf('## 13.')],
    ] as const) {
      const { code, output } = await run(script);
      expect({ round, code, tail: code === 0 ? '' : output.slice(-3000) }).toEqual({
        round,
        code: 0,
        tail: '',
      });
    }
  }, 900_000);
});
