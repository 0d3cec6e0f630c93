import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { silenceAwsSdkNodeSupportWarning } from '../storage/aws-sdk-node-support.js';

const execFileAsync = promisify(execFile);

export interface ObjectStoreTarget {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * Runs mc against the store under the alias `store`, given in MC_HOST_store (its credentials stay
 * out of the command line and out of any configuration file: mc's goes to a scratch folder).
 */
async function mc(mcPath: string, store: ObjectStoreTarget, args: string[]): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'embedded-credit-mc-'));
  const target = new URL(store.endpoint);
  target.username = encodeURIComponent(store.accessKeyId);
  target.password = encodeURIComponent(store.secretAccessKey);
  try {
    await execFileAsync(mcPath, ['--config-dir', scratch, '--quiet', '--no-color', ...args], {
      env: { ...process.env, MC_HOST_store: target.toString().replace(/\/$/, '') },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    const output = `${failed.stderr ?? ''}${failed.stdout ?? ''}`.trim().split('\n').slice(-5);
    throw new Error(`mc ${args[0]} failed: ${output.join(' | ') || String(error)}`, {
      cause: error,
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Every object of the bucket into `folder`, one file per key (mc decrypts SSE-S3 as it reads). */
export async function mirrorOut(
  mcPath: string,
  store: ObjectStoreTarget,
  folder: string,
): Promise<void> {
  await mc(mcPath, store, ['mirror', `store/${store.bucket}`, folder]);
}

/** The files of `folder` into the bucket, each written with server-side encryption (SSE-S3). */
export async function mirrorIn(
  mcPath: string,
  store: ObjectStoreTarget,
  folder: string,
): Promise<void> {
  await mc(mcPath, store, [
    'mirror',
    '--enc-s3',
    `store/${store.bucket}`,
    folder,
    `store/${store.bucket}`,
  ]);
}

/** Whether the bucket holds no object (a restore writes into an empty one only). */
export async function bucketIsEmpty(store: ObjectStoreTarget): Promise<boolean> {
  silenceAwsSdkNodeSupportWarning();
  const client = new S3Client({
    region: store.region,
    endpoint: store.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
  });
  try {
    const page = await client.send(new ListObjectsV2Command({ Bucket: store.bucket, MaxKeys: 1 }));
    return (page.KeyCount ?? 0) === 0;
  } finally {
    client.destroy();
  }
}

export const sha256OfFile = (path: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });

export interface FileListing {
  /** `sha256  key` lines, sorted by key, as `sha256sum -c` reads them. */
  lines: string[];
  files: number;
  bytes: number;
}

/** Every file under `folder`, hashed: the object list the manifest vouches for. */
export async function listFiles(folder: string): Promise<FileListing> {
  const paths = (await filesUnder(folder)).sort();
  const lines: string[] = [];
  let bytes = 0;
  for (const path of paths) {
    bytes += (await stat(path)).size;
    lines.push(`${await sha256OfFile(path)}  ${relative(folder, path).split(sep).join('/')}`);
  }
  return { lines, files: paths.length, bytes };
}

async function filesUnder(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(path)));
    else if (entry.isFile()) found.push(path);
  }
  return found;
}
