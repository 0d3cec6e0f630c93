import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  defaultProgress,
  resolveBinary,
  run,
  type Binary,
  type Progress,
} from './temporal-binaries.js';

/**
 * promtool, Prometheus's rule checker and rule unit-test runner, for the tests of the alert rules
 * in docs/operations/prometheus/ (test/unit/alert-rules.test.ts). Built once from Prometheus's Go
 * module (v0.316.0 is Prometheus 3.16.0; its go.mod has no `replace` nor `exclude`, so
 * `go install …@version` takes it) and cached outside the repository like the servers;
 * PROMTOOL_PATH points at a binary of your own instead.
 *
 * The smallest build that still is promtool: `remove_all_sd` leaves out the cloud service
 * discoveries (AWS, Azure, GCE, …; `enable_dns_sd` keeps DNS, which prometheus.yml uses, so
 * `promtool check config` still reads it), `-trimpath` and `-ldflags=-s -w` drop paths and
 * symbols, no cgo.
 */
export const PROMTOOL_VERSION = 'v0.316.0';
const MODULE = `github.com/prometheus/prometheus/cmd/promtool@${PROMTOOL_VERSION}`;
const BUILD_FLAGS = ['-trimpath', '-tags', 'remove_all_sd,enable_dns_sd', '-ldflags=-s -w'];

const promtool: Binary = {
  what: 'promtool',
  envVar: 'PROMTOOL_PATH',
  folder: `promtool-${PROMTOOL_VERSION}`,
  artifact: 'promtool',
  buildLabel: 'go install',
  async build(tmp, progress) {
    progress(
      `building promtool with go install ${MODULE} (first run only, about 4 minutes on 2 cores)…`,
    );
    await run('go', ['install', ...BUILD_FLAGS, MODULE], {
      env: { ...process.env, GOBIN: tmp, CGO_ENABLED: '0' },
      progress,
    });
  },
  help: [
    'set PROMTOOL_PATH to a promtool binary (Prometheus 3.x), or',
    `install Go and run: go install ${BUILD_FLAGS.join(' ')} ${MODULE}`,
  ],
};

export const resolvePromtool = (progress: Progress = defaultProgress) =>
  resolveBinary(promtool, progress);

/** The resolved promtool's path (it is never an SDK download). */
export async function promtoolPath(progress?: Progress): Promise<string> {
  const resolved = await resolvePromtool(progress);
  if (resolved.executable.type !== 'existing-path') throw new Error('promtool not resolved');
  return resolved.executable.path;
}

/** Runs promtool; resolves with its exit code and everything it printed, never rejects on exit. */
export async function runPromtool(
  path: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(path, args, { cwd });
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}
