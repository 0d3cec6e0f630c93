import { DefaultLogger, Runtime } from '@temporalio/worker';

// Each fork that loads it gets one Temporal runtime that logs warnings only and leaves signals to vitest.
Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
