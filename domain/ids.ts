import { randomBytes } from 'node:crypto';

/** Opaque, prefixed identifiers (`ten_…`, `key_…`, `req_…`): the prefix says what a thing is. */
export function newId(prefix: string, bytes = 10): string {
  return `${prefix}_${randomBytes(bytes).toString('hex')}`;
}
