import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { temporalLogger } from '../../src/worker/temporal-logger.js';

describe("the Temporal SDK's logs", () => {
  it('are lines of the service’s JSON log, at their level, with their metadata and errors', () => {
    const lines: string[] = [];
    const sdk = temporalLogger(
      createLogger('debug', 'worker', { write: (line: string) => void lines.push(line) }),
    );
    sdk.trace('below the level: not written');
    sdk.info('Worker state changed', { sdkComponent: 'worker', state: 'RUNNING' });
    sdk.log('WARN', 'Activity failed', {
      sdkComponent: 'activity',
      activityType: 'recordPix',
      error: new Error('connection refused', { cause: new Error('ECONNREFUSED') }),
    });
    sdk.error('Workflow task failed', {
      workflowId: 'loan/ln_1',
      failure: new TypeError('x is undefined'),
      customer: { cpf: '529.982.247-25' },
    });

    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.map(({ level, msg }) => [level, msg])).toEqual([
      [30, 'Worker state changed'],
      [40, 'Activity failed'],
      [50, 'Workflow task failed'],
    ]);
    expect(parsed[0]).toMatchObject({
      service: 'worker',
      component: 'temporal-sdk',
      sdkComponent: 'worker',
      state: 'RUNNING',
    });
    expect(parsed[1]).toMatchObject({
      activityType: 'recordPix',
      err: { type: 'Error', message: 'connection refused', cause: { message: 'ECONNREFUSED' } },
    });
    // The service's redaction holds for the SDK's lines too.
    expect(parsed[2]).toMatchObject({
      err: { type: 'TypeError', message: 'x is undefined' },
      customer: { cpf: '***.982.247-**' },
    });
  });
});
