import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { keyRing } from '../../src/domain/key-ring.js';
import {
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  PayloadEncryptionCodec,
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

  it('passes a payload that is not encrypted through unchanged (histories from before it)', async () => {
    const codec = new PayloadEncryptionCodec(keyRing([key('k1')]));
    const payloads = [plain(), defaultPayloadConverter.toPayload(undefined), { data: undefined }];
    expect(await codec.decode(payloads)).toEqual(payloads);
  });

  it('decode-only (upgrades from a release without it): encodes nothing, still decodes', async () => {
    const ring = keyRing([key('k1')]);
    const upgrading = new PayloadEncryptionCodec(ring, 'decode-only');
    const payload = plain();
    expect(await upgrading.encode([payload])).toEqual([payload]);
    const sealedByOn = await sealed(new PayloadEncryptionCodec(ring));
    expect(defaultPayloadConverter.fromPayload((await upgrading.decode([sealedByOn]))[0]!)).toEqual(
      input,
    );
  });
});
