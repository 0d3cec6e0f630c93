import type * as S3Sdk from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { silenceAwsSdkNodeSupportWarning } from './aws-sdk-node-support.js';
import { FileStoreUnavailableError, type FileStore, type StoredKey } from './file-store.js';

export interface S3Settings {
  /** An S3-compatible server (MinIO); unset for AWS itself. */
  endpoint: string | undefined;
  bucket: string;
  region: string;
  /** Explicit keys; otherwise the SDK's default chain (environment, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
}

interface LoadedS3 {
  sdk: typeof S3Sdk;
  client: S3Sdk.S3Client;
}

const retriedOnCorruption = new Set(['BadDigest', 'XAmzContentChecksumMismatch', 'InvalidDigest']);

/** Bounded, so a request never waits on an unreachable store past its own budget. */
const CONNECTION_TIMEOUT_MS = 2_000;
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * The object store (S3, or any S3-compatible server such as MinIO) with the official AWS SDK.
 * Credentials come from the SDK's default chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a
 * profile, an instance role). Every put sends the SHA-256 the store checks (`ChecksumSHA256`: a
 * corrupted upload is refused, never stored) and asks for server-side encryption.
 */
export function createS3FileStore(settings: S3Settings): FileStore & {
  client(): Promise<S3Sdk.S3Client>;
} {
  const Bucket = settings.bucket;
  // The SDK is loaded on first use: a process that never touches a file does not carry it.
  let loaded: Promise<LoadedS3> | undefined;
  const s3 = (): Promise<LoadedS3> =>
    (loaded ??= import('@aws-sdk/client-s3').then((sdk) => {
      silenceAwsSdkNodeSupportWarning();
      return {
        sdk,
        client: new sdk.S3Client({
          region: settings.region,
          ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
          ...(settings.credentials ? { credentials: settings.credentials } : {}),
          maxAttempts: 2,
          requestHandler: {
            connectionTimeout: CONNECTION_TIMEOUT_MS,
            requestTimeout: REQUEST_TIMEOUT_MS,
          },
        }),
      };
    }));

  /** A failure of the store itself (unreachable, timed out, 5xx) is a 503 upstream. */
  const guard = async <T>(
    operation: string,
    call: (loadedS3: LoadedS3) => Promise<T>,
  ): Promise<T> => {
    const loadedS3 = await s3();
    try {
      return await call(loadedS3);
    } catch (error) {
      const status =
        error instanceof loadedS3.sdk.S3ServiceException
          ? error.$metadata.httpStatusCode
          : undefined;
      // A body that arrived corrupted is refused by its checksum: like an outage, worth a retry.
      const corrupted = error instanceof Error && retriedOnCorruption.has(error.name);
      if (status !== undefined && status < 500 && !corrupted) throw error;
      throw new FileStoreUnavailableError(operation, error);
    }
  };

  return {
    client: async () => (await s3()).client,
    async put(key, bytes, sha256) {
      await guard('put', ({ sdk, client }) =>
        client.send(
          new sdk.PutObjectCommand({
            Bucket,
            Key: key,
            Body: bytes,
            ContentLength: bytes.length,
            ChecksumSHA256: Buffer.from(sha256, 'hex').toString('base64'),
            ServerSideEncryption: 'AES256',
          }),
        ),
      );
    },
    async open(key) {
      try {
        const object = await guard('get', ({ sdk, client }) =>
          client.send(new sdk.GetObjectCommand({ Bucket, Key: key })),
        );
        if (!(object.Body instanceof Readable)) throw new Error(`object ${key} has no stream body`);
        return { body: object.Body, size: object.ContentLength ?? 0 };
      } catch (error) {
        if (error instanceof Error && error.name === 'NoSuchKey') return undefined;
        throw error;
      }
    },
    async delete(key) {
      await guard('delete', ({ sdk, client }) =>
        client.send(new sdk.DeleteObjectCommand({ Bucket, Key: key })),
      );
    },
    async *list() {
      let ContinuationToken: string | undefined;
      do {
        const page = await guard('list', ({ sdk, client }) =>
          client.send(new sdk.ListObjectsV2Command({ Bucket, ContinuationToken })),
        );
        const keys: StoredKey[] = (page.Contents ?? []).flatMap((object) =>
          object.Key && object.LastModified
            ? [{ key: object.Key, lastModified: object.LastModified }]
            : [],
        );
        yield keys;
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },
  };
}
