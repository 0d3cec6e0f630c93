import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureDemoStaff } from '../../src/devstack/demo-staff.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { runScript, walkthroughHome, walkthroughScript } from '../helpers/walkthrough.js';

/*
 * docs/walkthrough-production-psp.md as written: every `sh` block, in order, in one bash, against
 * the real service and the run's PSP simulator (this stack's account there), with the demo
 * partner's and the demo staff's files `npm run dev` keeps in `.data/`.
 */
let stack: TestStack;
let walkthrough: Awaited<ReturnType<typeof walkthroughHome>>;

beforeAll(async () => {
  stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1h' } });
  walkthrough = await walkthroughHome(stack, 'walkthrough-production');
  await ensureDemoStaff(
    stack.config.databaseUrl,
    join(walkthrough.home, '.data', 'demo-staff.json'),
  );
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await walkthrough?.remove();
});

describe('the production walkthrough (the PSP)', () => {
  it('runs as written', async () => {
    const script = await walkthroughScript('walkthrough-production-psp.md');
    const { code, output } = await runScript(script, walkthrough.home, {
      API: stack.baseUrl,
      MAIL: inject('mailpitApiUrl'),
      PSP: inject('pspSimulator').url,
      PSP_CA: inject('pspSimulator').caFile,
      DATABASE_URL: stack.config.databaseUrl,
    });
    expect({ code, tail: code === 0 ? '' : output.slice(-3000) }).toEqual({ code: 0, tail: '' });
    if (process.env.WALKTHROUGH_PRINT) process.stdout.write(output);
    // What the document shows is what happened.
    for (const line of [
      'claimed',
      'pyt_ confirmed 300000 ana.',
      'dropped',
      'missing_notification booked_missing_notification',
      'ledger: every check holds',
    ])
      expect(output).toContain(line);
  }, 300_000);

  it("runs the README's shell snippets as written (a token, credentials, a smoke check)", async () => {
    // Not the two commands (CI runs them), the SDK's packing (test/sdk/quick-start.test.ts) nor
    // `docker compose` (no Docker here; test/unit/compose.test.ts reads it).
    const script = await walkthroughScript(
      'README.md',
      (block) => !/npm (install|ci|pack) |docker compose/.test(block),
    );
    expect(script).toContain('/ops/v1/smoke-checks');
    const { code, output } = await runScript(script, walkthrough.home, {
      API: stack.baseUrl,
      OPS_TOKEN,
    });
    expect({ code, tail: code === 0 ? '' : output.slice(-3000) }).toEqual({ code: 0, tail: '' });
    expect(output).toContain('"name":"reporting"');
    expect(output).toMatch(/"status":"completed","delay_ms":2000/);
  }, 60_000);
});
