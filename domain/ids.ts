import { randomFillSync } from 'node:crypto';

// Random bytes are drawn from the CSPRNG a pool at a time, as crypto.randomUUID does: one
// randomBytes call per id costs about 3 µs (a syscall for OpenSSL's fork check among it), which
// was a fifth of a trivial request's CPU when every request got a fresh request id. Each byte is
// used once, so ids are exactly as unpredictable as before. Secrets (API keys, webhook secrets)
// do not come from here.
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

function randomHex(bytes: number): string {
  if (bytes > POOL_BYTES) throw new RangeError(`at most ${POOL_BYTES} bytes`);
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

/** Opaque, prefixed identifiers (`ten_…`, `key_…`, `req_…`): the prefix says what a thing is. */
export function newId(prefix: string, bytes = 10): string {
  return `${prefix}_${randomHex(bytes)}`;
}
