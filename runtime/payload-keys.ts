// Where the payload key comes from. PAYLOAD_KEY (with PAYLOAD_KEY_ID) when set;
// otherwise, where allowed (`npm start`, and the api and worker outside
// production), a key generated once and kept in DATA_DIR/payload-key.json
// (mode 0600), so every process on this machine that shares DATA_DIR shares it.
// In production the key must be configured: processes on different machines
// must hold the same key, which a file on one of them cannot give.
import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Config, defaultPayloadKeyId, type PayloadKey, payloadKeyOf } from '../config/env.ts';
import { EncryptionCodec, type PayloadKeyring } from './payload-codec.ts';

export const PAYLOAD_KEY_FILE = 'payload-key.json';

export class PayloadKeyRequiredError extends Error {
  constructor() {
    super(
      'PAYLOAD_KEY is required when NODE_ENV=production: the base64 of 32 random bytes (openssl rand -base64 32), the same for the api and every worker. See the README section "Payload encryption".',
    );
    this.name = 'PayloadKeyRequiredError';
  }
}

interface KeyFile {
  id: string;
  key: string;
  created_at: string;
}

function readKeyFile(file: string): PayloadKey {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<KeyFile>;
  const bytes = Buffer.from(parsed.key ?? '', 'base64');
  if (typeof parsed.id !== 'string' || bytes.length !== 32) throw new Error(`${file} is not a payload key file (expected {"id", "key": base64 of 32 bytes}).`);
  return payloadKeyOf(parsed.id, bytes);
}

/** The key kept in `dataDir`, created (mode 0600) when there is none yet. */
export function dataDirPayloadKey(dataDir: string): { key: PayloadKey; created: boolean; file: string } {
  const file = path.join(dataDir, PAYLOAD_KEY_FILE);
  mkdirSync(dataDir, { recursive: true });
  const bytes = randomBytes(32);
  const record: KeyFile = { id: defaultPayloadKeyId(bytes), key: bytes.toString('base64'), created_at: new Date().toISOString() };
  // Written whole under a temporary name, then linked into place: link fails if the file exists, so
  // two processes starting together end up with one key, and nobody ever reads a half-written file.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    return { key: readKeyFile(file), created: false, file };
  } finally {
    rmSync(tmp, { force: true });
  }
  return { key: payloadKeyOf(record.id, bytes), created: true, file };
}

/** The key in `dataDir` if there is one (never creates it). */
function existingDataDirKey(dataDir: string): PayloadKey | null {
  try {
    return readKeyFile(path.join(dataDir, PAYLOAD_KEY_FILE));
  } catch {
    return null;
  }
}

export interface ResolvedKeyring {
  keyring: PayloadKeyring;
  /** env: PAYLOAD_KEY; data-dir: the generated key file. */
  source: 'env' | 'data-dir';
  /** Set when this call generated the key file. */
  createdFile?: string;
}

/**
 * The keyring of this process. `allowDataDirKey` false (production) makes PAYLOAD_KEY
 * mandatory. A key file left in DATA_DIR from before PAYLOAD_KEY was set still decrypts,
 * so histories written under it stay readable.
 */
export function resolvePayloadKeyring(config: Pick<Config, 'payload' | 'database'>, options: { allowDataDirKey: boolean }): ResolvedKeyring {
  const previous = [...config.payload.previous];
  if (config.payload.key) {
    const leftover = existingDataDirKey(config.database.dataDir);
    const known = new Set([config.payload.key.id, ...previous.map((k) => k.id)]);
    if (leftover && !known.has(leftover.id)) previous.push(leftover);
    return { keyring: { current: config.payload.key, previous }, source: 'env' };
  }
  if (!options.allowDataDirKey) throw new PayloadKeyRequiredError();
  const { key, created, file } = dataDirPayloadKey(config.database.dataDir);
  return { keyring: { current: key, previous: previous.filter((k) => k.id !== key.id) }, source: 'data-dir', ...(created ? { createdFile: file } : {}) };
}

/** The codec for this process's keyring. */
export function payloadCodecFor(resolved: ResolvedKeyring): EncryptionCodec {
  return new EncryptionCodec(resolved.keyring);
}
