import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startStack, type TestStack } from '../helpers/stack.js';
import { runScript, walkthroughHome, walkthroughScript } from '../helpers/walkthrough.js';

/*
 * docs/walkthrough-late-loan.md as written: every `sh` block, in order, in one bash, against the
 * real service (reminder e-mails through the run's Mailpit), once. The stack runs what the
 * document says it assumes, `npm run dev`'s configuration: the sandbox review after 10 s, and the
 * defaults AGREEMENT_BREAK_DAYS (30) and WRITE_OFF_AFTER_DAYS (360), which the customer's sandbox
 * clock reaches in a few moves.
 */
let stack: TestStack;
let walkthrough: Awaited<ReturnType<typeof walkthroughHome>>;

beforeAll(async () => {
  stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '10s' } });
  walkthrough = await walkthroughHome(stack, 'walkthrough-late-loan');
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await walkthrough?.remove();
});

describe('the late-loan walkthrough', () => {
  it('runs as written: reminders, an agreement kept, one broken, a refinancing, a write-off', async () => {
    const script = await walkthroughScript('walkthrough-late-loan.md');
    const { code, output } = await runScript(script, walkthrough.home, {
      API: stack.baseUrl,
      MAIL: inject('mailpitApiUrl'),
      DATABASE_URL: stack.config.databaseUrl,
    });
    expect({ code, tail: code === 0 ? '' : output.slice(-3000) }).toEqual({ code: 0, tail: '' });
    if (process.env.WALKTHROUGH_PRINT) process.stdout.write(output);
    // What the document shows is what happened: the reminder e-mails, the agreements' ends, the
    // refinanced loan, the write-off's and the recovery's entries, the ledger after each scenario.
    for (const pattern of [
      /^Olá, Ana\.$/m,
      /está em atraso há 5 dias/,
      /^loan\.agreement_created\nloan\.agreement_accepted\nloan\.agreement_active\nloan\.agreement_fulfilled$/m,
      /^agreement \d+ \S+ .*\+agreement_discounts \d+ /m,
      // The day before the break the agreement lives; the next day's start breaks it.
      /^active\nbroken \S+ \d{4}-\d{2}-\d{2}T03:00:00\.000Z$/m,
      /^ln_[0-9a-f]{32} finished refinanced 0$/m,
      /^loan\.written_off$/m,
      /^write_off \d+ \S+ \+credit_losses \d+ -loan_principal \d+$/m,
      /^payment \d+ \S+ \+collections_clearing (\d+) -recoveries \1$/m,
    ])
      expect(output).toMatch(pattern);
    // The refinancing's release: the new money to the borrower, the payoff to the old loan.
    const release =
      /^disbursement 500000 \S+ \+loan_principal \d+ -disbursement_clearing (\d+) -refinancing_clearing (\d+) -iof_payable \d+$/m.exec(
        output,
      );
    expect(Number(release?.[1]) + Number(release?.[2])).toBe(500000);
    expect(output).toMatch(
      new RegExp(`^refinancing ${release?.[2]} \\S+ \\+refinancing_clearing ${release?.[2]} `, 'm'),
    );
    expect(output.match(/^ledger: every check holds$/gm)).toHaveLength(4);
  }, 600_000);
});
