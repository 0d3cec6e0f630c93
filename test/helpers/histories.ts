import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkflowClient, WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { projectRoot } from '../../src/project-root.js';
import { workflowIds } from '../../src/temporal/workflow-ids.js';

/** The corpus: `test/histories/<workflow>/<case>.json`, one folder per workflow type. */
export const historiesDir = join(projectRoot, 'test', 'histories');

/**
 * Each workflow type's folder: the first segment of its workflow ids (`loan/ln_…` → `loan`),
 * with the type's name, as the first event of each of its histories names it.
 */
export const historyFolders: Record<string, string> = Object.fromEntries(
  (Object.keys(workflowIds) as (keyof typeof workflowIds)[]).map((key) => [
    workflowIds[key]('x', 1).split('/')[0]!,
    key,
  ]),
);

/**
 * The runs of a workflow's chain, oldest first, each with its history's length: walked back from
 * the latest run, each naming the run it continued as new from.
 */
export async function runsOf(
  client: WorkflowClient,
  workflowId: string,
): Promise<{ runId: string; events: number }[]> {
  const runs: { runId: string; events: number }[] = [];
  let runId: string | null | undefined = (await client.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history = await client.getHandle(workflowId, runId).fetchHistory();
    runs.unshift({ runId, events: history.events?.length ?? 0 });
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
  }
  return runs;
}

/** A case's name: short kebab-case, saying which path of the workflow the history took. */
const CASE_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * With RECORD_HISTORIES=1, saves a workflow run's history to
 * `test/histories/<workflow>/<caseName>.json` for the replay test, which replays every saved
 * history against the current workflow code: a change that would break workflows already running
 * in production fails there first. A history is never overwritten: when the case has one, the new
 * recording is a new file, `<caseName>.2.json`, `.3.json`, … (the next free number).
 *
 * `handle` names the run recorded: a handle without a run id is the latest run of its chain (pass
 * `getHandle(workflowId, runId)` to record an earlier one). Its workflow id must name `workflow`.
 * Answers the file written, or undefined when not recording.
 */
export async function recordHistory(
  handle: WorkflowHandle,
  workflow: string,
  caseName: string,
): Promise<string | undefined> {
  // Checked on every run, recording or not, so a misnamed case fails where it is written.
  if (!(workflow in historyFolders))
    throw new Error(`recordHistory: no workflow type has the folder "${workflow}"`);
  if (handle.workflowId.split('/')[0] !== workflow)
    throw new Error(`recordHistory: ${handle.workflowId} is not a ${workflow} workflow`);
  if (!CASE_NAME.test(caseName))
    throw new Error(`recordHistory: "${caseName}" is not a kebab-case case name`);
  if (process.env.RECORD_HISTORIES !== '1') return undefined;

  const folder = join(historiesDir, workflow);
  await mkdir(folder, { recursive: true });
  const json = historyToJSON(await handle.fetchHistory());
  for (let n = 1; ; n++) {
    const file = join(folder, n === 1 ? `${caseName}.json` : `${caseName}.${n}.json`);
    try {
      // `wx`: created here or not at all, so two recordings of one case never share a file.
      await writeFile(file, json, { flag: 'wx' });
      return file;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
