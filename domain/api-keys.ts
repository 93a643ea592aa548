// API key format and hashing. A key is shown once at creation; only its SHA-256
// hash is stored, so a database leak does not leak usable keys.
import { randomBytes } from 'node:crypto';
import { sha256Hex } from './digest.ts';

export const KEY_KINDS = ['core', 'workspace'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

const KIND_TAG: Record<KeyKind, string> = { core: 'core', workspace: 'ws' };
const PREFIX_LENGTH = 14;

export interface MintedKey {
  secret: string;
  prefix: string;
  hash: string;
}

/** `gws_core_<43 url-safe chars>` or `gws_ws_<…>`: 256 bits of entropy. */
export function mintKey(kind: KeyKind): MintedKey {
  const secret = `gws_${KIND_TAG[kind]}_${randomBytes(32).toString('base64url')}`;
  return { secret, prefix: secret.slice(0, PREFIX_LENGTH), hash: hashKey(secret) };
}

export function hashKey(secret: string): string {
  return sha256Hex(secret);
}

/** Rejects obviously malformed bearer values before any database lookup. */
export function looksLikeKey(secret: string): boolean {
  return /^gws_(core|ws)_[A-Za-z0-9_-]{43}$/.test(secret);
}
