import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { silenceAwsSdkNodeSupportWarning } from '../storage/aws-sdk-node-support.js';
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

/**
 * The MinIO client, for the admin API (a user and its policy): built the same way from the
 * newest version the module proxy serves, of the server's era (its go.mod has no `replace`
 * either). MC_PATH points at a binary of your own instead.
 */
export const MC_VERSION = 'v0.0.0-20250313080218-cf909e1063a9';

const mc = goInstalled({
  what: 'MinIO client (mc)',
  envVar: 'MC_PATH',
  module: `github.com/minio/mc@${MC_VERSION}`,
  folder: `mc-${MC_VERSION}`,
  artifact: 'mc',
  duration: 'about a minute',
  orElse: 'point S3_ENDPOINT and S3_BUCKET at an S3-compatible store of your own.',
});

export const resolveMinioClient = (progress: Progress = defaultProgress) =>
  resolveBinary(mc, progress);

export interface MinioServer {
  /** The S3 endpoint, e.g. http://127.0.0.1:9000. */
  endpoint: string;
  /** The web console, when started with one. */
  console: string | undefined;
  bucket: string;
  /**
   * What the API and the worker need to use it (S3_* and the AWS credential variables): the
   * credentials of a user limited to the bucket's objects ({@link bucketPolicy}), never root's.
   */
  env: Record<string, string>;
  /** The root credentials: the console's login, and tests that make buckets of their own. */
  root: { accessKeyId: string; secretAccessKey: string };
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
/** The application's user (development and tests), limited to the bucket by its policy. */
const APP_ACCESS_KEY = 'embedded-credit-app';
const APP_SECRET_KEY = 'embedded-credit-app-dev-secret';
const REGION = 'us-east-1';
/** The development KMS key (32 bytes): fixed, so a restarted server still reads its objects. */
const KMS_KEY = Buffer.alloc(32, 'embedded-credit/').toString('base64');

/**
 * Starts MinIO on loopback with its data in `dataDir`, the bucket created and the application's
 * user given only its objects, with a KMS key so the server-side encryption every put asks for is
 * real. Resolves once it answers.
 */
export async function startMinio(options: MinioOptions): Promise<MinioServer> {
  const progress = options.progress ?? defaultProgress;
  const [binary, client] = await Promise.all([
    resolveMinio(progress),
    resolveMinioClient(progress),
  ]);
  if (binary.executable.type !== 'existing-path') throw new Error('MinIO binary not resolved');
  if (client.executable.type !== 'existing-path') throw new Error('mc binary not resolved');
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
    AWS_ACCESS_KEY_ID: APP_ACCESS_KEY,
    AWS_SECRET_ACCESS_KEY: APP_SECRET_KEY,
  };
  try {
    await createBucket(endpoint, bucket);
    await createBucketUser(client.executable.path, endpoint, bucket, {
      accessKey: APP_ACCESS_KEY,
      secretKey: APP_SECRET_KEY,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    endpoint,
    console: options.consolePort ? `http://localhost:${options.consolePort}` : undefined,
    bucket,
    env,
    root: MINIO_ROOT_CREDENTIALS,
    process: child,
    stop,
  };
}

/** The development server's root credentials (loopback only; production sets its own). */
export const MINIO_ROOT_CREDENTIALS = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY };

/**
 * What the application's user may do, and nothing else: list the bucket, and put, get and delete
 * its objects (the file store's four calls). No other bucket, no bucket operation (create, delete,
 * policy, versioning…), no admin API.
 */
export function bucketPolicy(bucket: string): object {
  return {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: ['s3:ListBucket'], Resource: [`arn:aws:s3:::${bucket}`] },
      {
        Effect: 'Allow',
        Action: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
        Resource: [`arn:aws:s3:::${bucket}/*`],
      },
    ],
  };
}

const execFileAsync = promisify(execFile);

/**
 * The application's user, through MinIO's admin API with `mc` as root: the policy (replaced),
 * the user (its secret set again) and the policy attached to it. Idempotent, so a restarted
 * server (development keeps its data) ends the same. mc's configuration goes to a scratch folder,
 * its target to MC_HOST_… (loopback).
 */
export async function createBucketUser(
  mcPath: string,
  endpoint: string,
  bucket: string,
  user: { accessKey: string; secretKey: string },
): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'embedded-credit-mc-'));
  const target = new URL(endpoint);
  target.username = encodeURIComponent(ACCESS_KEY);
  target.password = encodeURIComponent(SECRET_KEY);
  const policyName = `objects-of-${bucket}`;
  const mcRun = async (...args: string[]) => {
    try {
      await execFileAsync(mcPath, ['--config-dir', scratch, '--json', '--quiet', ...args], {
        env: { ...process.env, MC_HOST_store: target.toString().replace(/\/$/, '') },
        timeout: 30_000,
      });
    } catch (error) {
      const output = (error as { stdout?: string }).stdout?.trim();
      throw new Error(`mc ${args.slice(0, 3).join(' ')} failed: ${output || String(error)}`, {
        cause: error,
      });
    }
  };
  try {
    const policyFile = join(scratch, 'policy.json');
    await writeFile(policyFile, JSON.stringify(bucketPolicy(bucket)));
    await mcRun('admin', 'policy', 'create', 'store', policyName, policyFile);
    await mcRun('admin', 'user', 'add', 'store', user.accessKey, user.secretKey);
    await mcRun('admin', 'policy', 'attach', 'store', policyName, '--user', user.accessKey);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The bucket, created if missing (a restart finds it there). */
export async function createBucket(endpoint: string, bucket: string): Promise<void> {
  silenceAwsSdkNodeSupportWarning();
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
