import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import {
  prebuiltWorkflowBundle,
  workflowInterceptorModules,
  workflowsSource,
} from '../worker/create-worker.js';

/** Part of `npm run build`: production workers load this bundle instead of bundling at start. */
const { code } = await bundleWorkflowCode({
  workflowsPath: workflowsSource,
  workflowInterceptorModules,
});
await mkdir(dirname(prebuiltWorkflowBundle), { recursive: true });
await writeFile(prebuiltWorkflowBundle, code);
console.log(
  `workflow bundle written to ${prebuiltWorkflowBundle} (${(code.length / 1024).toFixed(0)} KiB)`,
);
