// Postgres stores neither U+0000 nor a UTF-16 surrogate without its pair, in text
// or jsonb. Customer input carrying them is refused by the contract layer;
// text the service did not check there (a model's answer, fetched context) is
// made storable with U+FFFD where it would otherwise fail the write.
import { findString } from './json-walk.ts';

export const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

export const isUnstorable = (s: string) => UNSTORABLE.test(s);

export const toStorable = (s: string) => s.replace(UNSTORABLE_ALL, '\ufffd');

/**
 * A copy of a JSON value whose string values are all storable, or the value itself when they
 * already are. Keys are left alone: where this is used they are the service's own (or fixed by a schema).
 */
export function storableJson<T>(value: T): T {
  const found = findString(value, (s) => isUnstorable(s));
  if (found === null) return value;
  return JSON.parse(JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? toStorable(v) : v))) as T;
}
