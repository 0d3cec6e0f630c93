/**
 * Ends a Vitest run with one plain line, `vitest: N passed, N failed, N skipped`, after Vitest's own
 * summary. CI reads a run's closing line to tell a run that tested something from one that tested
 * nothing; Vitest's coloured summary is not a form it reads, while the fuzzer's report, printed
 * earlier, ends with a line that looks like a test runner closing on no test at all.
 *
 * A file or suite that failed outside its tests (it did not load, a hook threw) and an error thrown
 * outside any test each count as a failure, so the line never reads "0 failed" when Vitest fails.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { SerializedError } from 'vitest';
import type { Reporter, TestModule } from 'vitest/node';

export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
  ): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const testModule of testModules) {
      for (const suite of [testModule, ...testModule.children.allSuites()]) {
        if (suite.errors().length > 0) failed += 1;
      }
      for (const testCase of testModule.children.allTests()) {
        const { state } = testCase.result();
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
    }
    const line = `vitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`;
    process.stdout.write(line);
    // `npm test` prints it again last, after the checks and the fuzzer beside it (test/run-suite.sh).
    mkdirSync('.data', { recursive: true });
    writeFileSync('.data/vitest-closing-line', line);
  }
}
