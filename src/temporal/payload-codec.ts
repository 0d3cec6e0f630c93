import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import {
  METADATA_ENCODING_KEY,
  ValueError,
  type DataConverter,
  type Payload,
  type PayloadCodec,
} from '@temporalio/common';
// A CommonJS package: Node's ESM loader gives its exports as the default import only.
import proto from '@temporalio/proto';
import type { KeyRing } from '../domain/key-ring.js';

/**
 * Everything the service hands Temporal — workflow inputs and results, activity arguments and
 * results, updates, signals, queries' answers, memos, summaries, current details — passes this
 * codec (contract §15): the whole payload (its metadata too) is sealed with AES-256-GCM under the
 * first key of TEMPORAL_PAYLOAD_KEYS, and the id of that key travels in the new payload's
 * metadata, so any key of the ring opens it and rotating is putting a new key first. A history
 * read straight from Temporal (or its UI without the codec endpoint) shows ciphertext.
 *
 * A payload that is not encrypted (histories from before the codec, test histories, `decode-only`
 * while a deployment is upgraded) decodes as it is; one sealed under a key the ring no longer
 * lists, or altered, is refused with an error that says which.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

/** `on`: encode encrypts. `decode-only`: encode passes through, decode still opens (upgrades). */
export type PayloadEncryption = 'on' | 'decode-only';

const ProtoPayload = proto.temporal.api.common.v1.Payload;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/**
 * A configured secret (≥ 32 bytes of any text) becomes this purpose's AES-256 key through HKDF,
 * so the same text could never yield the same key for another use (sessions, see codec-session.ts).
 */
export const deriveKey = (secret: Buffer, purpose: string): Buffer =>
  Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), purpose, 32));

const PAYLOAD_KEY_PURPOSE = 'embedded-credit temporal payload codec v1';

export class PayloadEncryptionCodec implements PayloadCodec {
  private readonly keys: Map<string, Buffer>;
  private readonly currentId: string;

  constructor(
    ring: KeyRing,
    private readonly mode: PayloadEncryption = 'on',
  ) {
    this.keys = new Map(
      ring.all.map((key) => [key.id, deriveKey(key.secret, PAYLOAD_KEY_PURPOSE)]),
    );
    this.currentId = ring.current.id;
  }

  // Synchronous work behind the interface's promises: AES-GCM of a payload takes microseconds.
  encode(payloads: Payload[]): Promise<Payload[]> {
    if (this.mode === 'decode-only') return Promise.resolve(payloads);
    return Promise.resolve().then(() => payloads.map((payload) => this.seal(payload)));
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.resolve().then(() => payloads.map((payload) => this.open(payload)));
  }

  private seal(payload: Payload): Payload {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentId)!, iv);
    // The key id is authenticated too: a payload cannot be made to name another key.
    cipher.setAAD(utf8.encode(this.currentId));
    const plaintext = ProtoPayload.encode(payload).finish();
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: utf8.encode(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: utf8.encode(this.currentId),
      },
      data: Buffer.concat([iv, ciphertext, cipher.getAuthTag()]),
    };
  }

  private open(payload: Payload): Payload {
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    if (!encoding || fromUtf8.decode(encoding) !== ENCRYPTED_ENCODING) return payload;
    const keyIdBytes = payload.metadata?.[KEY_ID_METADATA];
    if (!keyIdBytes) throw new ValueError('an encrypted payload without its encryption-key-id');
    const keyId = fromUtf8.decode(keyIdBytes);
    const key = this.keys.get(keyId);
    if (!key)
      throw new ValueError(
        `a payload encrypted under key "${keyId}", which TEMPORAL_PAYLOAD_KEYS does not list`,
      );
    const data = payload.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES)
      throw new ValueError(`an encrypted payload of key "${keyId}" too short to hold one`);
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
    decipher.setAAD(keyIdBytes);
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plaintext: Buffer;
    try {
      plaintext = Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new ValueError(
        `a payload of key "${keyId}" failed authentication: altered, or not sealed by that key`,
      );
    }
    return ProtoPayload.decode(plaintext);
  }
}

/** The data converter of every client and worker of the service (and of its tests and benches). */
export function payloadDataConverter(settings: {
  payloadKeys: KeyRing;
  payloadEncryption?: PayloadEncryption;
}): DataConverter {
  return {
    payloadCodecs: [new PayloadEncryptionCodec(settings.payloadKeys, settings.payloadEncryption)],
  };
}
