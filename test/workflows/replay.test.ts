import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { workflowIds } from '../../src/temporal/workflow-ids.js';
import { historiesDir } from '../helpers/histories.js';

/**
 * Histories saved from real runs (`RECORD_HISTORIES=1` on the e2e tests) replayed against today's
 * workflow code. A workflow change that is not replay-compatible — a reordered activity, a new
 * timer where there was none — fails here rather than in workflows already running.
 */
describe('replaying recorded histories', async () => {
  const files = (await readdir(historiesDir)).filter((file) => file.endsWith('.json'));

  it('has histories for every workflow type', () => {
    // A workflow's id names its type: `loan/ln_…` → loan.json (and loan.{case}.json for more).
    const types = Object.values(workflowIds).map((id) => id('x', 1).split('/')[0]);
    expect([...new Set(files.map((file) => file.split('.')[0]))].sort()).toEqual(types.sort());
  });

  for (const file of files) {
    it(`replays ${file} deterministically`, async () => {
      const history = JSON.parse(await readFile(join(historiesDir, file), 'utf8')) as unknown;
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: inject('workflowBundlePath') } },
        history,
        file,
      );
    });
  }
});
