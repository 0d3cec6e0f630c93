import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import {
  METADATA_ENCODING_KEY,
  ValueError,
  type DataConverter,
  type Payload,
  type PayloadCodec,
  type SerializationContext,
} from '@temporalio/common';
// A CommonJS package: Node's ESM loader gives its exports as the default import only.
import proto from '@temporalio/proto';
import type { KeyRing } from '../domain/key-ring.js';
import type { CustomerKey, CustomerKeys } from './customer-keys.js';

/**
 * Everything the service hands Temporal — workflow inputs and results, activity arguments and
 * results, updates, signals, queries' answers, memos, summaries, current details — passes this
 * codec (contract §15): the whole payload (its metadata too) is sealed with AES-256-GCM, and the
 * id of the key travels in the new payload's metadata, so any process holding that key opens it.
 * A history read straight from Temporal (or its UI without the codec endpoint) shows ciphertext.
 *
 * - The payloads of a customer's workflows (onboarding, offers, loans, and their activities) are
 *   sealed under that customer's data key (`customer-key-id`, see customer-keys.ts), which the
 *   customer's erasure destroys: those histories, and any copy of them, no longer open.
 * - Every other payload, or any when no key store is given (tools and benches without the
 *   database), is sealed under the first key of TEMPORAL_PAYLOAD_KEYS (`encryption-key-id`);
 *   every key of the ring opens, so rotating is putting a new key first.
 *
 * With encryption `on`, only a sealed payload is taken (integrity, not just secrecy): one that
 * arrives in clear — an Update or a Signal sent straight to Temporal's frontend, past the API — is
 * replaced by a payload of the encoding {@link REFUSED_ENCODING}, which no converter reads, so the
 * workflow rejects the Update (the SDK rejects an Update whose input cannot be read, leaving no
 * history) and never runs a handler with it. `decode-only` (upgrading from workers without the
 * codec; refused in production) and the replay of recorded histories take plain payloads as they
 * are. One sealed under a key no process holds, or altered, is an error that says which.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
export const CUSTOMER_KEY_ID_METADATA = 'customer-key-id';
/** What a payload that arrived unencrypted becomes while encryption is on: unreadable by design. */
export const REFUSED_ENCODING = 'binary/refused-unencrypted';

/**
 * `on`: encode encrypts, decode takes sealed payloads only. `decode-only`: encode passes through,
 * decode opens sealed payloads and takes plain ones (upgrades; never in production).
 */
export type PayloadEncryption = 'on' | 'decode-only';

/** What decoding does with a payload that arrived in clear. */
export type PlainPayloads = 'refuse' | 'accept';

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

/** The customer whose key sealed a payload, and whether it arrived sealed at all (the codec endpoint's audit). */
export interface OpenedPayload {
  payload: Payload;
  /** `plain`: it arrived unencrypted; `master`: under TEMPORAL_PAYLOAD_KEYS; else the customer's id. */
  sealedBy: 'plain' | 'master' | { customerId: string };
}

export class PayloadEncryptionCodec implements PayloadCodec {
  private readonly keys: Map<string, Buffer>;
  private readonly currentId: string;

  constructor(
    ring: KeyRing,
    private readonly mode: PayloadEncryption = 'on',
    private readonly customerKeys?: CustomerKeys,
    private readonly plain: PlainPayloads = mode === 'on' ? 'refuse' : 'accept',
  ) {
    this.keys = new Map(
      ring.all.map((key) => [key.id, deriveKey(key.secret, PAYLOAD_KEY_PURPOSE)]),
    );
    this.currentId = ring.current.id;
  }

  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    if (this.mode === 'decode-only' || payloads.length === 0) return payloads;
    const customerKey = await this.customerKeyFor(context);
    return payloads.map((payload) =>
      customerKey
        ? seal(payload, customerKey.key, customerKey.id, CUSTOMER_KEY_ID_METADATA)
        : seal(payload, this.keys.get(this.currentId)!, this.currentId, KEY_ID_METADATA),
    );
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map(async (payload) => (await this.open(payload)).payload));
  }

  /** Opens one payload and says what sealed it; a plain one as this codec takes plain payloads. */
  async open(payload: Payload, plain: PlainPayloads = this.plain): Promise<OpenedPayload> {
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    if (!encoding || fromUtf8.decode(encoding) !== ENCRYPTED_ENCODING)
      return {
        payload: plain === 'accept' ? payload : refused(),
        sealedBy: 'plain',
      };
    const customerKeyId = payload.metadata?.[CUSTOMER_KEY_ID_METADATA];
    if (customerKeyId) {
      const keyId = fromUtf8.decode(customerKeyId);
      if (!this.customerKeys)
        throw new ValueError(
          `a payload sealed under customer data key "${keyId}", and this process has no access to customer keys`,
        );
      let customerKey: CustomerKey;
      try {
        customerKey = await this.customerKeys.openingKey(keyId);
      } catch (error) {
        throw new ValueError(
          `a payload sealed under customer data key "${keyId}": ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      return {
        payload: unseal(payload, customerKey.key, customerKeyId, `customer data key "${keyId}"`),
        sealedBy: { customerId: customerKey.customerId },
      };
    }
    const keyIdBytes = payload.metadata?.[KEY_ID_METADATA];
    if (!keyIdBytes) throw new ValueError('an encrypted payload without its encryption-key-id');
    const keyId = fromUtf8.decode(keyIdBytes);
    const key = this.keys.get(keyId);
    if (!key)
      throw new ValueError(
        `a payload encrypted under key "${keyId}", which TEMPORAL_PAYLOAD_KEYS does not list`,
      );
    return { payload: unseal(payload, key, keyIdBytes, `key "${keyId}"`), sealedBy: 'master' };
  }

  /** The customer key of the workflow a payload belongs to (its own, or its activity's). */
  private async customerKeyFor(context?: SerializationContext): Promise<CustomerKey | undefined> {
    const workflowId = context?.workflowId;
    if (!this.customerKeys || !workflowId) return undefined;
    const customerId = await this.customerKeys.customerOf(workflowId);
    return customerId === undefined ? undefined : this.customerKeys.sealingKey(customerId);
  }
}

/** The payload sealed under `key`, its id in the metadata and authenticated as associated data. */
function seal(payload: Payload, key: Buffer, keyId: string, idMetadata: string): Payload {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  // The key id is authenticated too: a payload cannot be made to name another key.
  cipher.setAAD(utf8.encode(keyId));
  const plaintext = ProtoPayload.encode(payload).finish();
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return {
    metadata: {
      [METADATA_ENCODING_KEY]: utf8.encode(ENCRYPTED_ENCODING),
      [idMetadata]: utf8.encode(keyId),
    },
    data: Buffer.concat([iv, ciphertext, cipher.getAuthTag()]),
  };
}

function unseal(payload: Payload, key: Buffer, keyIdBytes: Uint8Array, named: string): Payload {
  const data = payload.data ?? new Uint8Array();
  if (data.length < IV_BYTES + TAG_BYTES)
    throw new ValueError(`an encrypted payload of ${named} too short to hold one`);
  const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
  decipher.setAAD(keyIdBytes);
  decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
  try {
    return ProtoPayload.decode(
      Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]),
    );
  } catch {
    throw new ValueError(
      `a payload of ${named} failed authentication: altered, or not sealed by that key`,
    );
  }
}

/** A payload no converter reads: what an unencrypted one becomes while encryption is on. */
const refused = (): Payload => ({
  metadata: { [METADATA_ENCODING_KEY]: utf8.encode(REFUSED_ENCODING) },
  data: new Uint8Array(),
});

/** The data converter of every client and worker of the service (and of its tests and benches). */
export function payloadDataConverter(settings: {
  payloadKeys: KeyRing;
  payloadEncryption?: PayloadEncryption;
  /** The customers' data keys (the database's); without them every payload is under the ring. */
  customerKeys?: CustomerKeys | undefined;
  /** Replaying recorded histories (plain ones among them) takes plain payloads. */
  plainPayloads?: PlainPayloads;
}): DataConverter {
  return {
    payloadCodecs: [
      new PayloadEncryptionCodec(
        settings.payloadKeys,
        settings.payloadEncryption,
        settings.customerKeys,
        settings.plainPayloads,
      ),
    ],
  };
}
