// Encryption of everything Temporal stores for this service: workflow inputs
// and results, activity inputs and results, signals, updates, queries, memos.
// A PayloadCodec (the SDK's hook between the payload converter and the wire)
// as in Temporal's encryption sample: each payload becomes one AES-256-GCM
// ciphertext of the whole serialised payload, with `encoding: binary/encrypted`
// and `encryption-key-id` metadata. It is used by every client and worker of
// the service and by the codec endpoint (api/routes/codec.ts) the Temporal UI
// decodes through.
//
// Decoding looks the key up by the id in the payload's metadata, so histories
// written under an older key stay readable while that key is configured as a
// previous one (rotation); payloads without the encrypted encoding (histories
// recorded before the codec) pass through unchanged.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { type DataConverter, METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { PayloadKey } from '../config/env.ts';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_ENCRYPTION_KEY_ID = 'encryption-key-id';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const PayloadMessage = proto.temporal.api.common.v1.Payload;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** The key payloads are encrypted with, and every key that may still decrypt. */
export interface PayloadKeyring {
  current: PayloadKey;
  /** Decrypt-only keys (earlier keys, for histories written before a rotation). */
  previous: PayloadKey[];
}

export class PayloadKeyMissingError extends Error {
  constructor(readonly keyId: string) {
    super(`A payload is encrypted with key "${keyId}", which is not configured: set it in PAYLOAD_KEYS_PREVIOUS (id:base64) to read it.`);
    this.name = 'PayloadKeyMissingError';
  }
}

/**
 * Fresh random IVs, drawn from the CSPRNG for 256 payloads at a time (as node's randomUUID batches its
 * entropy): every IV is still new random bytes, handed out once, for a call per 256 payloads instead of one each.
 */
const IVS_PER_DRAW = 256;
let ivPool = Buffer.alloc(0);
let ivAt = 0;
function nextIv(): Buffer {
  if (ivAt + IV_BYTES > ivPool.length) {
    ivPool = randomBytes(IV_BYTES * IVS_PER_DRAW);
    ivAt = 0;
  }
  const iv = ivPool.subarray(ivAt, ivAt + IV_BYTES);
  ivAt += IV_BYTES;
  return iv;
}

function encrypt(plain: Uint8Array, key: Buffer): Buffer {
  const iv = nextIv();
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  // The layout of WebCrypto's AES-GCM (and so of the sample's codec): iv | ciphertext | tag.
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

function decrypt(sealed: Uint8Array, key: Buffer): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new Error('An encrypted payload is too short to be one.');
  const iv = sealed.subarray(0, IV_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
}

export function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
  return encoding !== undefined && encoding !== null && fromUtf8.decode(encoding) === ENCRYPTED_ENCODING;
}

const ENCRYPTED_ENCODING_BYTES = utf8.encode(ENCRYPTED_ENCODING);

export class EncryptionCodec implements PayloadCodec {
  private readonly keys: Map<string, Buffer>;
  private readonly currentId: string;
  private readonly currentIdBytes: Uint8Array;

  constructor(keyring: PayloadKeyring) {
    this.currentId = keyring.current.id;
    this.currentIdBytes = utf8.encode(this.currentId);
    this.keys = new Map([...keyring.previous, keyring.current].map((k) => [k.id, k.bytes]));
  }

  /** The id of the key new payloads are encrypted with. */
  get keyId(): string {
    return this.currentId;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const key = this.keys.get(this.currentId)!;
    return payloads.map((payload) => ({
      metadata: {
        [METADATA_ENCODING_KEY]: ENCRYPTED_ENCODING_BYTES,
        [METADATA_ENCRYPTION_KEY_ID]: this.currentIdBytes,
      },
      data: encrypt(PayloadMessage.encode(payload).finish(), key),
    }));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (!isEncrypted(payload)) return payload; // written before the codec, or not ours to open
      const idBytes = payload.metadata?.[METADATA_ENCRYPTION_KEY_ID];
      if (!idBytes) throw new Error('An encrypted payload names no encryption key id.');
      const keyId = fromUtf8.decode(idBytes);
      const key = this.keys.get(keyId);
      if (!key) throw new PayloadKeyMissingError(keyId);
      if (!payload.data) throw new Error('An encrypted payload has no data.');
      const message = PayloadMessage.decode(decrypt(payload.data, key));
      // A plain payload: protobufjs leaves absent bytes as a default on the prototype (not a Uint8Array).
      return {
        ...message,
        metadata: message.metadata ?? {},
        data: message.data instanceof Uint8Array ? message.data : new Uint8Array(),
      } as Payload;
    });
  }
}

/** The data converter of every client and worker of the service: default converters, payloads encrypted. */
export function serviceDataConverter(codec: PayloadCodec): DataConverter {
  return { payloadCodecs: [codec] };
}
