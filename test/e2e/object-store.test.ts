import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { documents } from '../../src/db/schema/index.js';
import {
  createBucket,
  MINIO_ROOT_CREDENTIALS,
  startMinio,
  type MinioServer,
} from '../../src/devstack/minio.js';
import { projectRoot } from '../../src/project-root.js';
import { FileStoreUnavailableError } from '../../src/storage/file-store.js';
import { ORPHAN_AGE_MS, sweepOrphanedFiles } from '../../src/storage/orphan-sweeper.js';
import { createS3FileStore } from '../../src/storage/s3-file-store.js';
import { activeCustomer, offerOf } from '../helpers/credit.js';
import { registerCustomer, upload } from '../helpers/customers.js';
import { freePort } from '../../src/devstack/free-port.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A JPEG of `size` bytes (its signature, then filler): what the API accepts as a photo. */
const jpeg = (size: number) => {
  const bytes = Buffer.alloc(size, 0x41);
  Buffer.from('ffd8ffe000104a464946', 'hex').copy(bytes);
  return bytes;
};

describe('documents and contracts in the object store (MinIO)', () => {
  let stack: TestStack;
  let api: Client;
  let token: string;

  beforeAll(async () => {
    stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1h' } });
    token = await tokenFor(stack, (await createPartner(stack)).credentials.sandbox);
    api = client(stack, token);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('stores an upload checked by its SHA-256, encrypted at rest, and streams it back as it came', async () => {
    const customer = await registerCustomer(api);
    const bytes = jpeg(300_000);
    const response = await upload(api, customer.id, 'selfie', { bytes, name: 'me.jpg' });
    expect(response.status).toBe(201);
    const document = (await response.json()) as { id: string; sha256: string };
    expect(document.sha256).toBe(sha256(bytes));

    // The object itself, read with the store's own client: the bytes, the hash the store
    // checked on the way in, and server-side encryption.
    const [row] = await stack.database.db
      .select()
      .from(documents)
      .where(eq(documents.id, document.id));
    const env = inject('objectStoreEnv');
    const store = createS3FileStore({
      endpoint: env.S3_ENDPOINT,
      bucket: env.S3_BUCKET!,
      region: env.S3_REGION!,
      credentials: {
        accessKeyId: env.AWS_ACCESS_KEY_ID!,
        secretAccessKey: env.AWS_SECRET_ACCESS_KEY!,
      },
    });
    const object = await (
      await store.client()
    ).send(
      new GetObjectCommand({
        Bucket: env.S3_BUCKET,
        Key: row!.storageKey,
        ChecksumMode: 'ENABLED',
      }),
    );
    expect(Buffer.from(await object.Body!.transformToByteArray()).equals(bytes)).toBe(true);
    expect(object.ChecksumSHA256).toBe(Buffer.from(sha256(bytes), 'hex').toString('base64'));
    expect(object.ServerSideEncryption).toBe('AES256');
    // Keys carry ids only.
    expect(row!.storageKey).toBe(`${row!.partnerId}/sandbox/${customer.id}/${document.id}`);

    // The store checks the hash itself: bytes that do not match it are refused, never stored.
    const key = `${row!.partnerId}/sandbox/${customer.id}/doc_corrupted`;
    await expect(store.put(key, bytes, sha256(Buffer.from('other bytes')))).rejects.toBeInstanceOf(
      FileStoreUnavailableError,
    );
    expect(await store.open(key)).toBeUndefined();

    // The partner's download: streamed, with its type and length.
    const file = await api(`/v3/customers/${customer.id}/documents/${document.id}/file`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/jpeg');
    expect(file.headers.get('content-length')).toBe(String(bytes.length));
    expect(sha256(new Uint8Array(await file.arrayBuffer()))).toBe(document.sha256);
  });

  it('serves a loan’s contract PDF from a second API process, which never saw it written', async () => {
    const customer = await activeCustomer(stack, api);
    const offer = await offerOf(api, customer.id);
    const sim = (await (
      await api(`/v3/credit-offers/${offer.id}/simulations`, {
        method: 'POST',
        body: { amount: offer.min_amount, installments: 3 },
      })
    ).json()) as { id: string };
    const loan = (await (
      await api('/v3/loans', {
        method: 'POST',
        body: {
          credit_offer_id: offer.id,
          simulation_id: sim.id,
          disbursement_account: { type: 'pix', pix_key: '+5511987654321' },
        },
      })
    ).json()) as { id: string; contract_sha256: string };

    const port = await freePort();
    const second = await spawnApi(stack, port);
    try {
      const contract = await fetch(`http://127.0.0.1:${port}/v3/loans/${loan.id}/contract`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(contract.status).toBe(200);
      expect(contract.headers.get('content-type')).toBe('application/pdf');
      const pdf = new Uint8Array(await contract.arrayBuffer());
      expect(contract.headers.get('content-length')).toBe(String(pdf.length));
      expect(sha256(pdf)).toBe(loan.contract_sha256);
    } finally {
      second.kill('SIGTERM');
    }
  });
});

describe('the orphan sweeper', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1h' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('removes, after a day, the objects no document or loan names, and nothing else', async () => {
    // A bucket of its own: a sweep of the shared one could take another file's upload in flight.
    // The application's user reaches the run's bucket only: this one is root's.
    const env = inject('objectStoreEnv');
    const bucket = `sweeper-${Date.now()}`;
    await createBucket(env.S3_ENDPOINT!, bucket);
    const store = createS3FileStore({
      endpoint: env.S3_ENDPOINT,
      bucket,
      region: env.S3_REGION!,
      credentials: MINIO_ROOT_CREDENTIALS,
    });
    const api = client(
      stack,
      await tokenFor(stack, (await createPartner(stack)).credentials.sandbox),
    );
    const customer = await registerCustomer(api);
    await upload(api, customer.id, 'selfie', { bytes: jpeg(1_000), name: 'a.jpg' });
    const [named] = await stack.database.db
      .select()
      .from(documents)
      .where(eq(documents.customerId, customer.id));
    const bytes = jpeg(1_000);
    const orphan = `${named!.partnerId}/sandbox/${customer.id}/doc_orphan`;
    await store.put(named!.storageKey, bytes, sha256(bytes));
    await store.put(orphan, bytes, sha256(bytes));

    const keys = async () => {
      const all: string[] = [];
      for await (const page of store.list()) all.push(...page.map((file) => file.key));
      return all.sort();
    };
    // Younger than a day: both stay, named or not.
    expect(await sweepOrphanedFiles({ db: stack.database.db, files: store }, new Date())).toEqual({
      examined: 2,
      removed: 0,
    });
    // A day later the orphan goes; the document's file stays.
    const tomorrow = new Date(Date.now() + ORPHAN_AGE_MS + 60_000);
    expect(await sweepOrphanedFiles({ db: stack.database.db, files: store }, tomorrow)).toEqual({
      examined: 2,
      removed: 1,
    });
    expect(await keys()).toEqual([named!.storageKey]);
  });
});

describe('the object store failing', () => {
  let minio: MinioServer;
  let stack: TestStack;
  let api: Client;

  beforeAll(async () => {
    // A MinIO of its own: this test stops it.
    minio = await startMinio({ dataDir: await mkdtemp(join(tmpdir(), 'minio-failing-')) });
    stack = await startStack({ env: { SANDBOX_REVIEW_DELAY: '1h', ...minio.env } });
    api = client(stack, await tokenFor(stack, (await createPartner(stack)).credentials.sandbox));
  });
  afterAll(async () => {
    await stack?.stop();
    await minio?.stop();
  });

  it('answers 503 with Retry-After when MinIO dies mid-upload, and records no document', async () => {
    const customer = await registerCustomer(api);
    // Frozen, MinIO takes the connection and never answers: the upload is under way when it dies.
    minio.process.kill('SIGSTOP');
    const uploading = upload(api, customer.id, 'selfie', { bytes: jpeg(2_000_000), name: 'a.jpg' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    minio.process.kill('SIGKILL');
    const response = await uploading;
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBeTruthy();
    expect(await response.json()).toMatchObject({ code: 'service_unavailable' });
    const rows = await stack.database.db
      .select()
      .from(documents)
      .where(eq(documents.customerId, customer.id));
    expect(rows).toEqual([]);
    // The API goes on answering what does not need the store.
    expect((await api(`/v3/customers/${customer.id}`)).status).toBe(200);
  });
});

/** A second API process on the same database, Temporal and bucket. */
async function spawnApi(stack: TestStack, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'src/main/api.ts')], {
    cwd: projectRoot,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      PORT: String(port),
      DATABASE_URL: stack.config.databaseUrl,
      TEMPORAL_ADDRESS: stack.config.temporal.address,
      TEMPORAL_TASK_QUEUE: stack.config.temporal.taskQueue,
      // Both hosts serve one public address (tokens name it as their audience).
      PUBLIC_BASE_URL: stack.config.publicBaseUrl,
      LOG_LEVEL: 'warn',
      ...inject('objectStoreEnv'),
    },
    stdio: 'ignore',
  });
  await eventually(
    async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/readyz`)).ok ? true : undefined;
      } catch {
        return undefined;
      }
    },
    'the second API process to be ready',
    60_000,
  );
  return child;
}
