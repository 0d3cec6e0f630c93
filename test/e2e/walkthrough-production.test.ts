import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureDemoStaff } from '../../src/devstack/demo-staff.js';
import { addDays, businessDate, startOfBusinessDate } from '../../src/domain/business-date.js';
import { OPS_TOKEN, startStack, TestClock, type TestStack } from '../helpers/stack.js';
import { runScript, walkthroughHome, walkthroughScript } from '../helpers/walkthrough.js';

/*
 * docs/walkthrough-production-psp.md as written: every `sh` block, in order, in one bash, against
 * the real service and the run's PSP simulator (this stack's account there), with the demo
 * partner's and the demo staff's files `npm run dev` keeps in `.data/`. Its section 10 runs once
 * the month has ended: there the service's clock moves to the next month's 1st, and that section
 * on (after section 1's names again) runs in a second bash.
 */
const clock = new TestClock();
let stack: TestStack;
let walkthrough: Awaited<ReturnType<typeof walkthroughHome>>;

beforeAll(async () => {
  stack = await startStack({
    clock,
    env: {
      SANDBOX_REVIEW_DELAY: '1h',
      // What `npm run dev` sets for the SCR 3040's header (src/main/dev.ts).
      SCR_INSTITUTION_CNPJ: '11222333000181',
      SCR_RESPONSIBLE_NAME: 'Ana Admin',
      SCR_RESPONSIBLE_EMAIL: 'scr@lender.example',
      SCR_RESPONSIBLE_PHONE: '1133334444',
    },
  });
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
    const doc = 'walkthrough-production-psp.md';
    const env = {
      API: stack.baseUrl,
      MAIL: inject('mailpitApiUrl'),
      PSP: inject('pspSimulator').url,
      PSP_CA: inject('pspSimulator').caFile,
      DATABASE_URL: stack.config.databaseUrl,
    };
    const day = await runScript(
      await walkthroughScript(doc, undefined, '## 10.'),
      walkthrough.home,
      env,
    );
    expect({ code: day.code, tail: day.code === 0 ? '' : day.output.slice(-3000) }).toEqual({
      code: 0,
      tail: '',
    });
    // The month ends: the service's clock at noon of the next month's 1st (São Paulo).
    const month = businessDate(clock.now()).slice(0, 7);
    const nextMonth = `${addDays(`${month}-28`, 8).slice(0, 7)}-01`;
    clock.advance(startOfBusinessDate(nextMonth) + 12 * 3_600_000 - clock.now().getTime());
    const names = await walkthroughScript(doc, undefined, '## 2.');
    const after = await runScript(
      `${names}\n${await walkthroughScript(doc, undefined, undefined, '## 10.')}`,
      walkthrough.home,
      env,
    );
    const output = `${day.output}${after.output}`;
    expect({ code: after.code, tail: after.code === 0 ? '' : after.output.slice(-3000) }).toEqual({
      code: 0,
      tail: '',
    });
    if (process.env.WALKTHROUGH_PRINT) process.stdout.write(output);
    // What the document shows is what happened.
    for (const line of [
      'claimed',
      'pyt_ confirmed 300000 ana.',
      'dropped',
      'missing_notification booked_missing_notification',
      'approved\nFIDC Exemplo Multissetorial\nprice received',
      'ledger: every check holds',
    ])
      expect(output).toContain(line);
    // Three loans sold and priced; the payoff of the sold one remitted to the fund, once the day
    // was over; the month's 3040 reports the two still owing as sold to it, the paid-off one not.
    expect(output).toMatch(/^submitted (\d+)\n(\d rows \d+\n){3}/m);
    expect(output).toMatch(
      /^payoff (\d+)\ntotal \1\npayment null\npaid \1 TED-\d{4}-\d\d-\d\d-2$/m,
    );
    const sale = String.raw`NatuOp="01" <Inf Tp="0102" Cd="${month}-\d\d" Ident="33445566" Perc="0"/>`;
    expect(output).toMatch(new RegExp(`^${sale}\n${sale}\nnot reported: it owes nothing$`, 'm'));
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
