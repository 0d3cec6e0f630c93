import { configDefaults, defineConfig } from 'vitest/config';
import LongestFirst from './test/helpers/sequencer.js';

const unitTests = 'test/unit/**/*.test.ts';

export default defineConfig({
  test: {
    // The Temporal native bridge has crashed under worker threads; forks are safe.
    pool: 'forks',
    // Three files at once on CI's 2 cores: most of a file's time is waiting (timers, workflows,
    // the walkthrough's sandbox delays), so a third fork fills it — 544 s of the suite became 388 s.
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // The second prints the plain closing line CI reads (see the file).
    reporters: ['default', './test/helpers/closing-line-reporter.ts'],
    projects: [
      // Pure code: no Temporal runtime loaded in their forks (importing @temporalio/worker costs a
      // fork some 0.4 s of CPU). The one that opens a native connection installs it itself.
      { extends: true, test: { name: 'unit', include: [unitTests] } },
      {
        extends: true,
        test: {
          name: 'service',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, unitTests],
          // One PostgreSQL, one Temporal dev server and one workflow bundle for the whole run —
          // this project's alone: at the root (or inherited by `extends`) each project would
          // start a set of its own.
          globalSetup: ['test/helpers/global-setup.ts'],
          // A fork runs its files one after another in one module registry: the service's modules
          // (Koa, Drizzle, the Temporal client and worker, the AWS SDK…) are loaded once per fork,
          // not once per file. Each file still starts and stops its own stack.
          isolate: false,
          // Each fork gets one Temporal runtime that logs warnings only and leaves signals to vitest.
          setupFiles: ['test/helpers/quiet-runtime.ts'],
        },
      },
    ],
  },
});
