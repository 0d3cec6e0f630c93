import { createHash } from 'node:crypto';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutBucketPolicyCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createBucket, MINIO_ROOT_CREDENTIALS } from '../../src/devstack/minio.js';
import { createS3FileStore } from '../../src/storage/s3-file-store.js';

/**
 * Least privilege in the object store (issue 27): the service's credentials are a MinIO user's
 * whose policy reaches its bucket's objects and nothing else; root's stay with the server.
 */

describe("the object store's credentials (a MinIO user, not root)", () => {
  const env = inject('objectStoreEnv');
  const s3 = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
    new S3Client({
      region: env.S3_REGION!,
      endpoint: env.S3_ENDPOINT!,
      forcePathStyle: true,
      credentials,
    });
  const app = s3({
    accessKeyId: env.AWS_ACCESS_KEY_ID!,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY!,
  });
  const root = s3(MINIO_ROOT_CREDENTIALS);
  const other = `least-privilege-${Date.now()}`;

  beforeAll(async () => {
    await createBucket(env.S3_ENDPOINT!, other);
    await root.send(new PutObjectCommand({ Bucket: other, Key: 'secret', Body: 'not yours' }));
  });
  afterAll(() => {
    app.destroy();
    root.destroy();
  });

  /** The S3 error a call fails with (its name and HTTP status). */
  const refusalOf = async (call: Promise<unknown>) => {
    try {
      await call;
    } catch (error) {
      const { name, $metadata } = error as {
        name: string;
        $metadata?: { httpStatusCode?: number };
      };
      return { name, status: $metadata?.httpStatusCode };
    }
    throw new Error('the call was not refused');
  };
  const denied = { name: 'AccessDenied', status: 403 };

  it('are not the root credentials', () => {
    expect(env.AWS_ACCESS_KEY_ID).not.toBe(MINIO_ROOT_CREDENTIALS.accessKeyId);
  });

  it('put, read, list and delete the objects of the bucket', async () => {
    const store = createS3FileStore({
      endpoint: env.S3_ENDPOINT,
      bucket: env.S3_BUCKET!,
      region: env.S3_REGION!,
      credentials: {
        accessKeyId: env.AWS_ACCESS_KEY_ID!,
        secretAccessKey: env.AWS_SECRET_ACCESS_KEY!,
      },
    });
    const key = `least-privilege/${Date.now()}`;
    const bytes = Buffer.from('a document');
    await store.put(key, bytes, createHash('sha256').update(bytes).digest('hex'));
    expect((await store.open(key))?.size).toBe(bytes.length);
    const listed: string[] = [];
    for await (const page of store.list()) listed.push(...page.map((file) => file.key));
    expect(listed).toContain(key);
    await store.delete(key);
    expect(await store.open(key)).toBeUndefined();
  });

  it('cannot create or delete a bucket, change its policy, or read another bucket', async () => {
    expect(await refusalOf(app.send(new CreateBucketCommand({ Bucket: `${other}-new` })))).toEqual(
      denied,
    );
    expect(await refusalOf(app.send(new DeleteBucketCommand({ Bucket: env.S3_BUCKET })))).toEqual(
      denied,
    );
    expect(await refusalOf(app.send(new DeleteBucketCommand({ Bucket: other })))).toEqual(denied);
    expect(
      await refusalOf(
        app.send(new PutBucketPolicyCommand({ Bucket: env.S3_BUCKET, Policy: '{}' })),
      ),
    ).toEqual(denied);
    expect(
      await refusalOf(app.send(new GetObjectCommand({ Bucket: other, Key: 'secret' }))),
    ).toEqual(denied);
    expect(await refusalOf(app.send(new ListObjectsV2Command({ Bucket: other })))).toEqual(denied);
    expect(
      await refusalOf(app.send(new PutObjectCommand({ Bucket: other, Key: 'x', Body: 'x' }))),
    ).toEqual(denied);
  });
});
