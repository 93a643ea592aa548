// Digests are the evidence in receipts: sha256 over a canonical (RFC 8785) JSON
// form, so the same value always gives the same digest whatever the key order.
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';

// The package is CommonJS with an ESM-style `export default` in its types; at run
// time the default import is the function itself.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** `sha256:<hex>` of the canonical JSON of `value`. */
export function digestOf(value: unknown): string {
  return `sha256:${sha256Hex(canonicalize(value) ?? 'null')}`;
}
