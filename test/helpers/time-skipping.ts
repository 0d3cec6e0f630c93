import { TestWorkflowEnvironment } from '@temporalio/testing';
import { inject } from 'vitest';

/** Temporal's time-skipping test server, the run's provisioned binary (workflow tests' timers). */
export const timeSkippingEnvironment = (): Promise<TestWorkflowEnvironment> =>
  TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: inject('testServerExecutable') },
  });
