import { tracingWorkerOptions } from '../../src/observability/tracing.js';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { developmentRing } from '../../src/config.js';
import { payloadDataConverter } from '../../src/temporal/payload-codec.js';
import { workflowTypes } from '../../src/temporal/workflow-ids.js';
import { historiesDir, historyFolders } from '../helpers/histories.js';

/**
 * The corpus of histories recorded from real and time-skipped runs (`RECORD_HISTORIES=1`, see
 * test/helpers/histories.ts), `test/histories/<workflow>/<case>.json`, replayed against today's
 * workflow code. A workflow change that is not replay-compatible — a reordered activity, a new
 * timer where there was none, a branch not behind `patched()` — fails here rather than in
 * workflows already running. Files are only ever added (test/unit/workflow-changes.test.ts).
 */
describe('replaying recorded histories', async () => {
  const files = (await readdir(historiesDir, { recursive: true }))
    .filter((file) => file.endsWith('.json'))
    .map((file) => relative(historiesDir, join(historiesDir, file)).split(sep).join('/'))
    .sort();
  const folderOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : '');

  it('has a folder with at least one history for every workflow type, and no file elsewhere', () => {
    const withHistories = [...new Set(files.map(folderOf))].sort();
    expect(withHistories).toEqual(Object.keys(historyFolders).sort());
    // One level deep: test/histories/<workflow>/<case>.json.
    expect(files.filter((file) => file.split('/').length !== 2)).toEqual([]);
  });

  for (const file of files) {
    it(`replays ${file} deterministically`, async () => {
      const history = JSON.parse(await readFile(join(historiesDir, file), 'utf8')) as {
        events?: {
          workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } };
        }[];
      };
      // Filed under its own type's folder: a loan's history replayed as a loan's.
      const key = historyFolders[folderOf(file)] as keyof typeof workflowTypes | undefined;
      expect(history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name).toBe(
        key && workflowTypes[key],
      );
      await Worker.runReplayHistory(
        {
          workflowBundle: { codePath: inject('workflowBundlePath') },
          // As the workers run: histories recorded from them hold payloads sealed under the
          // development key; the older ones, and those of the test environment, are plain, so
          // replay takes plain payloads (a worker with encryption on refuses them).
          dataConverter: payloadDataConverter({
            payloadKeys: developmentRing('TEMPORAL_PAYLOAD_KEYS'),
            plainPayloads: 'accept',
          }),
          // The workers' sinks: a traced run's workflow spans go to the (here idle) exporter.
          sinks: tracingWorkerOptions().sinks,
        },
        history,
        file,
      );
    });
  }
});
