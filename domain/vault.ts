// Pure rules of the customer vault: what an entry's digest covers, and how the
// per-tenant hash chain links one write to the next.
import { digestOf, sha256Hex } from './digest.ts';

export const VAULT_ACTIONS = ['created', 'corrected', 'quarantined', 'released', 'forgotten'] as const;
export type VaultAction = (typeof VAULT_ACTIONS)[number];

export interface EntryFields {
  id: string;
  version: number;
  subject: string;
  content: string;
  tags: string[];
  source: string;
  expiresAt: Date | null;
}

/** Digest of an entry's current version: everything a reader relies on. */
export function entryDigest(e: EntryFields): string {
  return digestOf({
    id: e.id,
    version: e.version,
    subject: e.subject,
    content: e.content,
    tags: e.tags,
    source: e.source,
    expires_at: e.expiresAt ? e.expiresAt.toISOString() : null,
  });
}

export const CHAIN_GENESIS = 'sha256:genesis';

/** hash(n) = sha256(hash(n-1) | seq | entry | action | entry digest). */
export function chainHash(prevHash: string, link: { seq: number; entryId: string; action: string; entryDigest: string }): string {
  return `sha256:${sha256Hex([prevHash, link.seq, link.entryId, link.action, link.entryDigest].join('|'))}`;
}
