import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../project-root.js';
import { freePort } from './free-port.js';
import { acceptsConnections, superviseServer, waitUntilReady } from './server-process.js';
import {
  defaultProgress,
  resolveBinary,
  run,
  type Binary,
  type Progress,
} from './temporal-binaries.js';

/**
 * Jaeger, where development (and the trace test) look at the traces the API and the worker export
 * by OTLP (src/observability/tracing.ts). Jaeger v2 is an OpenTelemetry Collector build configured
 * by a YAML file: ours is docs/operations/jaeger/jaeger.yaml (OTLP in, memory storage, the UI and
 * its query API, every listener on loopback). JAEGER_PATH points at a binary of your own instead.
 *
 * Built once from the Go module and cached outside the repository like the other servers. Not with
 * `go install …@version`, which refuses a module whose go.mod has `replace` directives (Jaeger's
 * has): a throwaway module takes the program as a tool (`go get -tool`), which applies the
 * version's requirements, and `go build` makes it there. No cgo, paths and symbols stripped.
 */
export const JAEGER_VERSION = 'v1.76.0';
const PACKAGE = 'github.com/jaegertracing/jaeger/cmd/jaeger';
const BUILD_FLAGS = ['-trimpath', '-ldflags=-s -w'];
export const jaegerConfigFile = join(projectRoot, 'docs', 'operations', 'jaeger', 'jaeger.yaml');

const jaeger: Binary = {
  what: 'Jaeger',
  envVar: 'JAEGER_PATH',
  folder: `jaeger-${JAEGER_VERSION}`,
  artifact: 'jaeger',
  buildLabel: 'go build',
  async build(tmp, progress) {
    progress(
      `building Jaeger ${JAEGER_VERSION} from its Go module (first run only, and long: 2,300 Go packages, 51 minutes measured at low priority on 2 busy cores)…`,
    );
    const module = await mkdtemp(join(tmpdir(), 'jaeger-build-'));
    const env = { ...process.env, CGO_ENABLED: '0' };
    try {
      await run('go', ['mod', 'init', 'local.embedded-credit/jaeger'], { cwd: module, progress });
      await run('go', ['get', '-tool', `${PACKAGE}@${JAEGER_VERSION}`], {
        cwd: module,
        env,
        progress,
      });
      await run('go', ['build', ...BUILD_FLAGS, '-o', join(tmp, 'jaeger'), PACKAGE], {
        cwd: module,
        env,
        progress,
      });
    } finally {
      await rm(module, { recursive: true, force: true });
    }
  },
  help: [
    'set JAEGER_PATH to a Jaeger v2 binary, or',
    `install Go and, in an empty folder: go mod init x && go get -tool ${PACKAGE}@${JAEGER_VERSION} && CGO_ENABLED=0 go build ${BUILD_FLAGS.join(' ')} ${PACKAGE}, or`,
    'leave OTEL_EXPORTER_OTLP_ENDPOINT unset (no traces), or point it at a collector of your own.',
  ],
};

export const resolveJaeger = (progress: Progress = defaultProgress) =>
  resolveBinary(jaeger, progress);

export interface JaegerServer {
  /** The UI, where a developer looks at a trace: http://127.0.0.1:16686. */
  uiUrl: string;
  /** OTLP over HTTP, as OTEL_EXPORTER_OTLP_ENDPOINT takes it: http://127.0.0.1:4318. */
  otlpEndpoint: string;
  /** What the API and the worker need to export their traces here. */
  env: { OTEL_EXPORTER_OTLP_ENDPOINT: string };
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface JaegerOptions {
  uiPort?: number;
  otlpHttpPort?: number;
  otlpGrpcPort?: number;
  progress?: Progress;
}

/**
 * Starts Jaeger with our configuration, every listener on 127.0.0.1 (free ports unless given), and
 * resolves once its query API answers and its OTLP receiver takes connections. Traces are kept in
 * memory: they go with the process.
 */
export async function startJaeger(options: JaegerOptions = {}): Promise<JaegerServer> {
  const progress = options.progress ?? defaultProgress;
  const binary = await resolveJaeger(progress);
  if (binary.executable.type !== 'existing-path') throw new Error('Jaeger binary not resolved');
  const uiPort = options.uiPort ?? (await freePort());
  const otlpHttpPort = options.otlpHttpPort ?? (await freePort());
  const otlpGrpcPort = options.otlpGrpcPort ?? (await freePort());
  const queryGrpcPort = await freePort();
  const child = spawn(binary.executable.path, ['--config', jaegerConfigFile], {
    env: {
      // Only what the configuration reads: no OTEL_* of ours reaches the collector's own SDK.
      PATH: process.env.PATH ?? '',
      JAEGER_UI_PORT: String(uiPort),
      JAEGER_QUERY_GRPC_PORT: String(queryGrpcPort),
      JAEGER_OTLP_HTTP_PORT: String(otlpHttpPort),
      JAEGER_OTLP_GRPC_PORT: String(otlpGrpcPort),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { exited, stop } = superviseServer(child, 'Jaeger');
  const uiUrl = `http://127.0.0.1:${uiPort}`;
  try {
    await Promise.race([
      waitUntilReady(
        'Jaeger',
        uiUrl,
        async () =>
          (await fetch(`${uiUrl}/api/services`)).ok && (await acceptsConnections(otlpHttpPort)),
      ),
      exited,
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  const otlpEndpoint = `http://127.0.0.1:${otlpHttpPort}`;
  return {
    uiUrl,
    otlpEndpoint,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint },
    process: child,
    stop,
  };
}
