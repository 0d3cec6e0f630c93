import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { keyRing } from '../../src/domain/key-ring.js';
import type { CustomerKeys } from '../../src/temporal/customer-keys.js';
import {
  CUSTOMER_KEY_ID_METADATA,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  PayloadEncryptionCodec,
  REFUSED_ENCODING,
} from '../../src/temporal/payload-codec.js';

const key = (id: string) => ({
  id,
  secret: Buffer.from(`${id}-temporal-payload-0123456789abcdef`),
});
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

const input = { loanId: 'ln_1', signerCpfs: ['52998224725'], email: 'maria@example.com' };
const plain = (): Payload => defaultPayloadConverter.toPayload(input);

async function sealed(codec: PayloadEncryptionCodec): Promise<Payload> {
  const [payload] = await codec.encode([plain()]);
  return payload!;
}

describe('the Temporal payload codec', () => {
  it('encrypts the whole payload under the current key, naming it, and decodes it back', async () => {
    const codec = new PayloadEncryptionCodec(keyRing([key('k2'), key('k1')]));
    const payload = await sealed(codec);
    expect(text(payload.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(payload.metadata?.[KEY_ID_METADATA])).toBe('k2');
    // Neither the value nor its original metadata (json/plain) is readable.
    expect(text(payload.data)).not.toContain('52998224725');
    expect(text(payload.data)).not.toContain('json/plain');
    const [decoded] = await codec.decode([payload]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(input);
    expect(text(decoded!.metadata?.encoding)).toBe('json/plain');
    // A fresh IV each time: the same value never encrypts to the same bytes.
    expect(Buffer.from((await sealed(codec)).data!)).not.toEqual(Buffer.from(payload.data!));
  });

  it('opens what an earlier key sealed once a new key is put first, and names a dropped key', async () => {
    const old = await sealed(new PayloadEncryptionCodec(keyRing([key('k1')])));
    const rotated = new PayloadEncryptionCodec(keyRing([key('k2'), key('k1')]));
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([old]))[0]!)).toEqual(input);
    expect(text((await sealed(rotated)).metadata?.[KEY_ID_METADATA])).toBe('k2');

    const dropped = new PayloadEncryptionCodec(keyRing([key('k2')]));
    await expect(dropped.decode([old])).rejects.toThrow(
      'a payload encrypted under key "k1", which TEMPORAL_PAYLOAD_KEYS does not list',
    );
  });

  it('refuses altered ciphertext, a swapped key id and a payload without its key id', async () => {
    const codec = new PayloadEncryptionCodec(keyRing([key('k2'), key('k1')]));
    const payload = await sealed(codec);
    const data = Buffer.from(payload.data!);
    data[20] = data[20]! ^ 0x01;
    await expect(codec.decode([{ ...payload, data }])).rejects.toThrow(
      'a payload of key "k2" failed authentication',
    );
    // The key id is authenticated with the ciphertext: renaming it cannot make it open.
    const renamed = {
      ...payload,
      metadata: { ...payload.metadata, [KEY_ID_METADATA]: Buffer.from('k1') },
    };
    await expect(codec.decode([renamed])).rejects.toThrow('failed authentication');
    const { [KEY_ID_METADATA]: _, ...withoutId } = payload.metadata!;
    await expect(codec.decode([{ ...payload, metadata: withoutId }])).rejects.toThrow(
      'without its encryption-key-id',
    );
    await expect(
      codec.decode([{ ...payload, data: Buffer.from(payload.data!).subarray(0, 10) }]),
    ).rejects.toThrow('too short');
  });

  it('refuses a payload that arrived unencrypted while encryption is on: no converter reads it', async () => {
    const codec = new PayloadEncryptionCodec(keyRing([key('k1')]));
    // An Update or Signal sent straight to Temporal, past the API: its payloads are plain.
    const forged = [plain(), defaultPayloadConverter.toPayload(undefined), { data: undefined }];
    const decoded = await codec.decode(forged);
    for (const payload of decoded) {
      expect(text(payload.metadata?.encoding)).toBe(REFUSED_ENCODING);
      expect(payload.data).toHaveLength(0);
      expect(() => defaultPayloadConverter.fromPayload(payload)).toThrow(
        `Unknown encoding: ${REFUSED_ENCODING}`,
      );
    }
    // Replaying recorded histories (plain ones among them) takes them as they are.
    const replaying = new PayloadEncryptionCodec(keyRing([key('k1')]), 'on', undefined, 'accept');
    expect(await replaying.decode(forged)).toEqual(forged);
  });

  it("seals a customer's workflows under that customer's data key, and nothing opens them once it is destroyed", async () => {
    // The key source in memory; the database's (customer-keys.ts) is exercised over the real
    // stack in test/e2e/erasure.test.ts.
    const dataKeys = new Map([
      ['cdk_a', { id: 'cdk_a', customerId: 'cust_a', key: Buffer.alloc(32, 1) }],
      ['cdk_b', { id: 'cdk_b', customerId: 'cust_b', key: Buffer.alloc(32, 2) }],
    ]);
    const destroyed = new Set<string>();
    const customerKeys: CustomerKeys = {
      customerOf: async (workflowId) =>
        /^loan\/ln_(\w)$/.exec(workflowId)?.[1]?.replace(/^/, 'cust_'),
      sealingKey: async (customerId) =>
        [...dataKeys.values()].find((k) => k.customerId === customerId),
      openingKey: async (keyId) => {
        const found = dataKeys.get(keyId);
        if (!found || destroyed.has(keyId)) throw new Error(`key ${keyId} destroyed`);
        return found;
      },
    };
    const codec = new PayloadEncryptionCodec(keyRing([key('k1')]), 'on', customerKeys);
    const workflow = (workflowId: string) => ({
      type: 'workflow' as const,
      namespace: 'default',
      workflowId,
    });
    const activity = (workflowId: string) => ({
      type: 'activity' as const,
      namespace: 'default',
      workflowId,
      isLocal: false,
    });
    const [ofA] = await codec.encode([plain()], workflow('loan/ln_a'));
    const [ofAsActivity] = await codec.encode([plain()], activity('loan/ln_a'));
    const [ofB] = await codec.encode([plain()], workflow('loan/ln_b'));
    const [ofNoOne] = await codec.encode([plain()], workflow('webhook-delivery/whd_1'));
    for (const [payload, id] of [
      [ofA, 'cdk_a'],
      [ofAsActivity, 'cdk_a'],
      [ofB, 'cdk_b'],
    ] as const) {
      expect(text(payload!.metadata?.[CUSTOMER_KEY_ID_METADATA])).toBe(id);
      expect(payload!.metadata?.[KEY_ID_METADATA]).toBeUndefined();
    }
    expect(text(ofNoOne!.metadata?.[KEY_ID_METADATA])).toBe('k1');
    expect((await codec.open(ofA!)).sealedBy).toEqual({ customerId: 'cust_a' });

    destroyed.add('cdk_a');
    await expect(codec.decode([ofA!])).rejects.toThrow(
      'a payload sealed under customer data key "cdk_a": key cdk_a destroyed',
    );
    expect(defaultPayloadConverter.fromPayload((await codec.decode([ofB!]))[0]!)).toEqual(input);
    // The ring's keys do not open a customer's payload, nor does a codec without customer keys.
    const renamed = {
      ...ofB!,
      metadata: { ...ofB!.metadata, [CUSTOMER_KEY_ID_METADATA]: Buffer.from('cdk_a') },
    };
    destroyed.clear();
    await expect(codec.decode([renamed])).rejects.toThrow('failed authentication');
    await expect(new PayloadEncryptionCodec(keyRing([key('k1')])).decode([ofB!])).rejects.toThrow(
      'this process has no access to customer keys',
    );
  });

  it('decode-only (upgrades from a release without it): encodes nothing, takes plain payloads, still decodes', async () => {
    const ring = keyRing([key('k1')]);
    const upgrading = new PayloadEncryptionCodec(ring, 'decode-only');
    const payload = plain();
    expect(await upgrading.encode([payload])).toEqual([payload]);
    expect(await upgrading.decode([payload])).toEqual([payload]);
    const sealedByOn = await sealed(new PayloadEncryptionCodec(ring));
    expect(defaultPayloadConverter.fromPayload((await upgrading.decode([sealedByOn]))[0]!)).toEqual(
      input,
    );
  });
});
