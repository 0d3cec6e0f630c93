import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, mostly waiting (the walkthrough's sandbox delays, workers killed
 * and their activities timing out, time-skipped loans): started first, so the run's length is the
 * sum of the work over three forks and not one of them starting last. On a fresh clone Vitest has
 * no timings cached and starts the largest files first, which put the walkthrough (a small file,
 * some 170 s) at the end.
 */
const LONGEST_FIRST = [
  'test/e2e/walkthrough.test.ts',
  'test/workflows/loan.test.ts',
  'test/e2e/loan-crash-safety.test.ts',
  'test/e2e/walkthrough-late-loan.test.ts',
  'test/e2e/payout-crash-safety.test.ts',
  'test/e2e/console.test.ts',
  'test/e2e/webhooks.test.ts',
  'test/e2e/webhook-crash-safety.test.ts',
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = LONGEST_FIRST.findIndex((path) => file.moduleId.endsWith(path));
      return at < 0 ? LONGEST_FIRST.length : at;
    };
    // Array.prototype.sort is stable: the rest keep Vitest's own order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
