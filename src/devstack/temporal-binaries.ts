import { spawn } from 'node:child_process';
import {
  access,
  chmod,
  constants,
  mkdir,
  mkdtemp,
  readFile,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { EphemeralServerExecutable } from '@temporalio/testing';
import { freePort } from './free-port.js';
import { acceptsConnections } from './server-process.js';

/**
 * Provides the Temporal servers the dev and test commands run, resolved in this order:
 *   1. an explicit path from the environment (TEMPORAL_CLI_PATH, TEMPORAL_TEST_SERVER_PATH);
 *   2. a copy cached outside the repository (EMBEDDED_CREDIT_CACHE_DIR, default ~/.cache/embedded-credit);
 *   3. a build from package registries: `go install` for the CLI, Maven for the Java test server;
 *   4. the Temporal SDK's own download, for machines with internet access.
 * Builds go to a temporary folder renamed into place, so an interrupted build never leaves a
 * half-made cache, and two processes provisioning at once both end with the same result.
 */

export const TEMPORAL_CLI_VERSION = '1.5.1';
export const TEMPORAL_TEST_SERVER_VERSION = '1.38.0';

/** Read on every call, so the environment at call time decides (and tests can point it elsewhere). */
export function cacheDirectory(): string {
  const base = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  return process.env.EMBEDDED_CREDIT_CACHE_DIR ?? join(base, 'embedded-credit');
}

export interface Resolved {
  executable: EphemeralServerExecutable;
  /** Where it came from, for the start-up banner. */
  source: string;
  /** For the SDK download: everything tried before it, reported if the download fails too. */
  unavailable?: ProvisioningError;
}

export type Progress = (line: string) => void;

const executable = async (path: string) => {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

export interface Binary {
  what: string;
  envVar: string;
  /** Cache folder name, versioned, and the executable inside it. */
  folder: string;
  artifact: string;
  buildLabel: string;
  build: (tmp: string, progress: Progress) => Promise<void>;
  help: string[];
  /** Whether the Temporal SDK can download it as a last resort (the Temporal servers only). */
  sdkDownload?: boolean;
}

/** Explicit path, then cache, then a build from the registries, then the SDK's download. */
export async function resolveBinary(binary: Binary, progress: Progress): Promise<Resolved> {
  const tried: string[] = [];
  const explicit = process.env[binary.envVar];
  if (explicit) {
    if (await executable(explicit)) return existing(explicit, binary.envVar);
    throw new ProvisioningError(
      binary.what,
      [`${binary.envVar}=${explicit} is not an executable file`],
      binary.help,
    );
  }
  tried.push(`${binary.envVar}: not set`);

  const folder = join(cacheDirectory(), binary.folder);
  const cached = join(folder, binary.artifact);
  if (await executable(cached)) return existing(cached, 'cache');
  tried.push(`cache: nothing at ${cached}`);

  if (
    await buildInto(folder, binary.artifact, tried, binary.buildLabel, (tmp) =>
      binary.build(tmp, progress),
    )
  ) {
    return existing(cached, `built with ${binary.buildLabel}`);
  }
  if (!binary.sdkDownload) throw new ProvisioningError(binary.what, tried, binary.help);
  return sdkDownload(binary.what, tried, binary.help);
}

/**
 * A server built from the Go module proxy with `go install` (no cgo) and cached like the rest:
 * the Temporal CLI, MinIO and Mailpit.
 */
export function goInstalled(options: {
  what: string;
  envVar: string;
  /** `module/path@version`, as `go install` takes it. */
  module: string;
  /** The cache folder (versioned) and the executable's name in it. */
  folder: string;
  artifact: string;
  /** How long the first build takes on 2 cores, for the progress line. */
  duration: string;
  /** The last way out, after the env var and Go. */
  orElse: string;
  sdkDownload?: boolean;
}): Binary {
  return {
    what: options.what,
    envVar: options.envVar,
    folder: options.folder,
    artifact: options.artifact,
    buildLabel: 'go install',
    async build(tmp, progress) {
      progress(
        `building ${options.what} with go install ${options.module} (first run only, ${options.duration})…`,
      );
      await run('go', ['install', options.module], {
        env: { ...process.env, GOBIN: tmp, CGO_ENABLED: '0' },
        progress,
      });
    },
    help: [
      `set ${options.envVar} to a ${options.artifact} binary, or`,
      `install Go and run: go install ${options.module}, or`,
      options.orElse,
    ],
    ...(options.sdkDownload ? { sdkDownload: true } : {}),
  };
}

const temporalCli = goInstalled({
  what: 'Temporal CLI',
  envVar: 'TEMPORAL_CLI_PATH',
  module: `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`,
  folder: `temporal-cli-${TEMPORAL_CLI_VERSION}`,
  artifact: 'temporal',
  duration: 'a few minutes',
  orElse: 'allow this machine to reach the Temporal release downloads so the SDK can fetch it.',
  sdkDownload: true,
});

const testServer: Binary = {
  what: 'Temporal test server',
  envVar: 'TEMPORAL_TEST_SERVER_PATH',
  folder: `temporal-test-server-${TEMPORAL_TEST_SERVER_VERSION}`,
  artifact: 'temporal-test-server',
  buildLabel: 'Maven',
  async build(tmp, progress) {
    progress(
      `fetching the Temporal test server ${TEMPORAL_TEST_SERVER_VERSION} with Maven (first run only)…`,
    );
    await writeFile(join(tmp, 'pom.xml'), testServerPom);
    await run(
      'mvn',
      [
        '-B',
        '--no-transfer-progress',
        'dependency:copy-dependencies',
        '-DincludeScope=runtime',
        `-DoutputDirectory=${join(tmp, 'lib')}`,
      ],
      { cwd: tmp, progress },
    );
    await writeLauncher(tmp);
  },
  help: [
    'set TEMPORAL_TEST_SERVER_PATH to an executable that runs io.temporal.testserver.TestServer <port>, or',
    `install Java 17+ and Maven so io.temporal:temporal-test-server:${TEMPORAL_TEST_SERVER_VERSION} can be fetched, or`,
    'allow this machine to reach the Temporal release downloads so the SDK can fetch it.',
  ],
  sdkDownload: true,
};

export const resolveTemporalCli = (progress: Progress = defaultProgress) =>
  resolveBinary(temporalCli, progress);
export async function resolveTestServer(progress: Progress = defaultProgress): Promise<Resolved> {
  const resolved = await resolveBinary(testServer, progress);
  const folder = join(cacheDirectory(), testServer.folder);
  const ours =
    resolved.executable.type === 'existing-path' &&
    resolved.executable.path === join(folder, testServer.artifact);
  if (ours) await ensureClassArchive(folder, progress);
  return resolved;
}

/**
 * The launcher the SDK runs as `<port> [extra args]` and stops with SIGKILL, so `exec` makes java
 * itself the process it kills. It starts the JVM on the class-data archive beside the jars when
 * there is one: the test files start a fresh time-skipping server per test, and the archive takes
 * a start from ~1.2 s to ~0.4 s of a busy CPU (and under the SDK's fixed 5 s limit on a loaded
 * machine). A JVM that cannot use the archive (another Java) starts without it.
 */
const LAUNCHER = [
  '#!/bin/sh',
  '# Made by embedded-credit: runs the Temporal Java test server from the jars beside it.',
  'here=$(cd "$(dirname "$0")" && pwd)',
  'if [ -f "$here/classes.jsa" ]; then',
  '  exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k -Xmx512m \\',
  '    -XX:SharedArchiveFile="$here/classes.jsa" -Xlog:cds=off -Xlog:cds+dynamic=off \\',
  '    -cp "$here/lib/*" io.temporal.testserver.TestServer "$@"',
  'fi',
  'exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k -Xmx512m \\',
  '  -cp "$here/lib/*" io.temporal.testserver.TestServer "$@"',
  '',
].join('\n');

async function writeLauncher(folder: string): Promise<void> {
  const path = join(folder, 'temporal-test-server');
  await writeFile(`${path}.tmp`, LAUNCHER);
  await chmod(`${path}.tmp`, 0o755);
  await rename(`${path}.tmp`, path);
}

/**
 * Makes the class-data archive (`classes.jsa`) of a cached test server once, with the launcher
 * that uses it (a cache made before the archive existed gets the new launcher too): the server is
 * started once with `-XX:ArchiveClassesAtExit`, stopped as soon as it listens, and the archive it
 * writes on its way out is renamed into place. Only an optimization: if anything fails, the
 * server starts without it.
 */
async function ensureClassArchive(folder: string, progress: Progress): Promise<void> {
  const archive = join(folder, 'classes.jsa');
  // Not a Maven build of ours (no jars beside it): left as it is.
  if (!(await exists(join(folder, 'lib')))) return;
  if ((await readFile(join(folder, 'temporal-test-server'), 'utf8')) !== LAUNCHER)
    await writeLauncher(folder);
  if (await exists(archive)) return;
  progress('making the Temporal test server’s class-data archive (first run only, a few seconds)…');
  const partial = `${archive}.${process.pid}.tmp`;
  const port = await freePort();
  const java = spawn(
    'java',
    [
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      '-Xmx512m',
      `-XX:ArchiveClassesAtExit=${partial}`,
      '-cp',
      `${join(folder, 'lib')}/*`,
      'io.temporal.testserver.TestServer',
      String(port),
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => java.once('exit', () => resolve()));
  let over = false;
  const failed = new Promise<never>((_, reject) => {
    java.once('error', reject);
    java.once('exit', (code) => reject(new Error(`java exited (${code}) before listening`)));
  });
  try {
    await Promise.race([waitForPort(port, 60_000, () => over), failed]);
    java.kill('SIGTERM');
    await exited;
    await rename(partial, archive);
  } catch (error) {
    over = true;
    java.kill('SIGKILL');
    await rm(partial, { force: true });
    progress(`no class-data archive (${String(error)}): the test server starts without one`);
  }
}

async function waitForPort(port: number, timeoutMs: number, over: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!over()) {
    const open = await acceptsConnections(port);
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listened on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const exists = async (path: string) => {
  try {
    await access(path, constants.F_OK);
    return true;
  } catch {
    return false;
  }
};

const testServerPom = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.embedded-credit</groupId>
  <artifactId>temporal-test-server-runtime</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>${TEMPORAL_TEST_SERVER_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`;

export class ProvisioningError extends Error {
  constructor(what: string, tried: string[], help: string[]) {
    super(
      `${what} is not available.\n  Tried:\n${tried.map((t) => `    - ${t}`).join('\n')}\n  To fix it, ${help.join('\n    ')}`,
    );
    this.name = 'ProvisioningError';
  }
}

function existing(path: string, source: string): Resolved {
  return { executable: { type: 'existing-path', path }, source: `${source} (${path})` };
}

/**
 * Resolves to the SDK's cached download, which only fails later, when the server starts. Callers
 * wrap that start with {@link explainStartFailure} so the message still says what was tried.
 */
function sdkDownload(what: string, tried: string[], help: string[]): Resolved {
  return {
    executable: { type: 'cached-download', downloadDir: join(cacheDirectory(), 'sdk-downloads') },
    source: 'the Temporal SDK download',
    unavailable: new ProvisioningError(
      what,
      [...tried, 'SDK download: failed when the server started'],
      help,
    ),
  };
}

/** Turns a failed start of an SDK-downloaded server into the one message that says what to do. */
export function explainStartFailure(resolved: Resolved, error: unknown): Error {
  const cause = error instanceof Error ? error : new Error(String(error));
  if (!resolved.unavailable) return cause;
  return new Error(`${resolved.unavailable.message}\n  (SDK download error: ${cause.message})`);
}

async function buildInto(
  folder: string,
  artifact: string,
  tried: string[],
  label: string,
  build: (tmp: string) => Promise<void>,
): Promise<boolean> {
  await mkdir(dirname(folder), { recursive: true });
  const tmp = await mkdtemp(join(dirname(folder), '.building-'));
  try {
    await build(tmp);
    if (await executable(join(folder, artifact))) return true; // another process finished first
    await rm(folder, { recursive: true, force: true }); // an incomplete copy from an older layout
    await rename(tmp, folder);
    return true;
  } catch (error) {
    tried.push(`${label}: ${error instanceof Error ? error.message : String(error)}`);
    return false;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

export function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; progress: Progress },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    const forward = (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-2000);
      for (const line of text.split('\n'))
        if (line.trim()) options.progress(`  ${command}: ${line.trim()}`);
    };
    child.stdout.on('data', forward);
    child.stderr.on('data', forward);
    child.on('error', (error) => reject(new Error(`${command} could not run (${error.message})`)));
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(
            new Error(
              `${command} exited with ${code}: ${tail.trim().split('\n').slice(-3).join(' | ')}`,
            ),
          ),
    );
  });
}

export function defaultProgress(line: string): void {
  process.stderr.write(`[provision] ${line}\n`);
}
