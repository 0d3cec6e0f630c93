import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { CreateBucketCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { freePort } from './free-port.js';
import { superviseServer, waitUntilReady } from './server-process.js';
import { defaultProgress, goInstalled, resolveBinary, type Progress } from './temporal-binaries.js';

/**
 * MinIO, the S3-compatible object store of development and tests, built with `go install` like
 * the Temporal CLI (its go.mod has no `replace`) and cached outside the repository. MINIO_PATH
 * points at a binary of your own instead.
 */
export const MINIO_VERSION = 'v0.0.0-20260212201848-7aac2a2c5b7c';

const minio = goInstalled({
  what: 'MinIO',
  envVar: 'MINIO_PATH',
  module: `github.com/minio/minio@${MINIO_VERSION}`,
  folder: `minio-${MINIO_VERSION}`,
  artifact: 'minio',
  duration: 'a few minutes',
  orElse: 'point S3_ENDPOINT and S3_BUCKET at an S3-compatible store of your own.',
});

export const resolveMinio = (progress: Progress = defaultProgress) =>
  resolveBinary(minio, progress);

export interface MinioServer {
  /** The S3 endpoint, e.g. http://127.0.0.1:9000. */
  endpoint: string;
  /** The web console, when started with one. */
  console: string | undefined;
  bucket: string;
  /** What the API and the worker need to use it (S3_* and the AWS credential variables). */
  env: Record<string, string>;
  /** The server process (tests stop it to see the API answer 503). */
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface MinioOptions {
  dataDir: string;
  port?: number;
  /** Serve the web console on this port (development); none in tests. */
  consolePort?: number;
  bucket?: string;
  progress?: Progress;
}

const ACCESS_KEY = 'embedded-credit';
/** Development credentials of a local, loopback-only server; production uses its own. */
const SECRET_KEY = 'embedded-credit-dev-secret';
const REGION = 'us-east-1';
/** The development KMS key (32 bytes): fixed, so a restarted server still reads its objects. */
const KMS_KEY = Buffer.alloc(32, 'embedded-credit/').toString('base64');

/**
 * Starts MinIO on loopback with its data in `dataDir` and the bucket created, with a KMS key so
 * the server-side encryption every put asks for is real. Resolves once it answers.
 */
export async function startMinio(options: MinioOptions): Promise<MinioServer> {
  const progress = options.progress ?? defaultProgress;
  const binary = await resolveMinio(progress);
  if (binary.executable.type !== 'existing-path') throw new Error('MinIO binary not resolved');
  await mkdir(options.dataDir, { recursive: true });
  const port = options.port ?? (await freePort());
  const endpoint = `http://127.0.0.1:${port}`;
  const consoleAddress = `127.0.0.1:${options.consolePort ?? (await freePort())}`;
  const child = spawn(
    binary.executable.path,
    [
      'server',
      '--quiet',
      '--address',
      `127.0.0.1:${port}`,
      '--console-address',
      consoleAddress,
      options.dataDir,
    ],
    {
      env: {
        ...process.env,
        MINIO_ROOT_USER: ACCESS_KEY,
        MINIO_ROOT_PASSWORD: SECRET_KEY,
        // A static KMS key: SSE-S3 (AES256) works on every object, as the store asks.
        MINIO_KMS_SECRET_KEY: `embedded-credit-key:${KMS_KEY}`,
        MINIO_BROWSER: options.consolePort ? 'on' : 'off',
        MINIO_UPDATE: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const { exited, stop } = superviseServer(child, 'MinIO');
  await Promise.race([
    waitUntilReady(
      'MinIO',
      endpoint,
      async () => (await fetch(`${endpoint}/minio/health/live`)).ok,
    ),
    exited,
  ]);

  const bucket = options.bucket ?? 'embedded-credit';
  const env = {
    S3_ENDPOINT: endpoint,
    S3_BUCKET: bucket,
    S3_REGION: REGION,
    AWS_ACCESS_KEY_ID: ACCESS_KEY,
    AWS_SECRET_ACCESS_KEY: SECRET_KEY,
  };
  await createBucket(endpoint, bucket);
  return {
    endpoint,
    console: options.consolePort ? `http://localhost:${options.consolePort}` : undefined,
    bucket,
    env,
    process: child,
    stop,
  };
}

/** The bucket, created if missing (a restart finds it there). */
export async function createBucket(endpoint: string, bucket: string): Promise<void> {
  const client = new S3Client({
    region: REGION,
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    const owned =
      error instanceof S3ServiceException &&
      (error.name === 'BucketAlreadyOwnedByYou' || error.name === 'BucketAlreadyExists');
    if (!owned) throw error;
  } finally {
    client.destroy();
  }
}
