import { TestWorkflowEnvironment } from '@temporalio/testing';
import { inject } from 'vitest';

/**
 * Temporal's time-skipping test server, the run's provisioned binary (workflow tests' timers).
 * The SDK gives a server 5 s to answer, a limit it does not let us change; a JVM starting on a
 * machine busy with the rest of the run can miss it (the start failed, no test ran), so a start
 * that timed out is tried again, twice at most.
 */
export async function timeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({
        server: { executable: inject('testServerExecutable') },
      });
    } catch (error) {
      if (attempt === 3 || !String(error).includes('did not start within')) throw error;
    }
  }
}
