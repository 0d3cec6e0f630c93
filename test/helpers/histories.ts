import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { projectRoot } from '../../src/project-root.js';

export const historiesDir = join(projectRoot, 'test', 'workflows', 'histories');

/**
 * With RECORD_HISTORIES=1, saves a finished workflow's history for the replay test, which replays
 * every saved history against the current workflow code: a change that would break workflows
 * already running in production fails there first.
 */
export async function recordHistory(handle: WorkflowHandle, name: string): Promise<void> {
  if (process.env.RECORD_HISTORIES !== '1') return;
  await writeFile(join(historiesDir, `${name}.json`), historyToJSON(await handle.fetchHistory()));
}
