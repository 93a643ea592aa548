// Memory as runs (and later chat) use it: recall and remember, both through
// the customer vault, so quarantined, expired and forgotten entries are never recalled.
import type { Db } from '../db/client.ts';
import { createEntry } from './vault/entries.ts';
import { searchVault } from './vault/search.ts';

export interface RecalledEntry {
  id: string;
  subject: string;
  content: string;
  rank: number;
}

export async function recallMemory(db: Db, tenantId: string, query: string, limit = 3): Promise<RecalledEntry[]> {
  const hits = await searchVault(db, tenantId, { q: query, limit });
  return hits.map((h) => ({ id: h.entry.id, subject: h.entry.subject ?? '', content: h.entry.content ?? '', rank: h.rank }));
}

/** Writes one vault entry; repeating with the same entryKey writes nothing more. Returns the entry id. */
export async function rememberEntry(
  db: Db,
  input: { tenantId: string; subject: string; content: string; source: string; entryKey: string; tags?: string[] },
): Promise<string> {
  const { entry } = await createEntry(db, input.tenantId, {
    subject: input.subject,
    content: input.content,
    tags: input.tags ?? [],
    source: input.source,
    expiresAt: null,
    entryKey: input.entryKey,
  });
  return entry.id;
}
