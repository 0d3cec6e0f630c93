import { DefaultLogger, Runtime } from '@temporalio/worker';

// Each fork gets one Temporal runtime that logs warnings only and leaves signals to vitest. A fork
// runs many files (the service project does not isolate them), and setup files run before each:
// the runtime is installed by the first.
const INSTALLED = Symbol.for('embedded-credit.test.quiet-runtime');
const fork = globalThis as { [INSTALLED]?: true };
if (!fork[INSTALLED]) {
  Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
  fork[INSTALLED] = true;
}
