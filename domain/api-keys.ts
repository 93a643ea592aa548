// API key format and hashing. A key is shown once at creation; only its SHA-256
// hash is stored, so a database leak does not leak usable keys.
import { randomBytes } from 'node:crypto';
import { sha256Hex } from './digest.ts';

/**
 * core: submits and reads runs; workspace: the vault only; approver: one person, who reads runs and
 * decides their approvals, and does nothing else (a key that submits never decides).
 */
export const KEY_KINDS = ['core', 'workspace', 'approver'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

const KIND_TAG: Record<KeyKind, string> = { core: 'core', workspace: 'ws', approver: 'apv' };

/** How a kind's secrets begin, for messages that name the key a route needs. */
export const keyPrefixOf = (kind: KeyKind) => `gws_${KIND_TAG[kind]}_`;
const PREFIX_LENGTH = 14;

export interface MintedKey {
  secret: string;
  prefix: string;
  hash: string;
}

/** `gws_core_<43 url-safe chars>`, `gws_ws_<…>` or `gws_apv_<…>`: 256 bits of entropy. */
export function mintKey(kind: KeyKind): MintedKey {
  const secret = `gws_${KIND_TAG[kind]}_${randomBytes(32).toString('base64url')}`;
  return { secret, prefix: secret.slice(0, PREFIX_LENGTH), hash: hashKey(secret) };
}

export function hashKey(secret: string): string {
  return sha256Hex(secret);
}

/** Rejects obviously malformed bearer values before any database lookup. */
export function looksLikeKey(secret: string): boolean {
  return /^gws_(core|ws|apv)_[A-Za-z0-9_-]{43}$/.test(secret);
}

/** The longest approver name: a person's name as an approval, a receipt and the inbox show it. */
export const APPROVER_NAME_MAX = 100;
