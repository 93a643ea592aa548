// The customer vault as the API sees it: every operation bound to one database.
import type { Db } from '../../db/client.ts';
import type { KeyKind } from '../../domain/api-keys.ts';
import { recordAudit } from '../audit.ts';
import { createKey, listKeys, revokeKey } from '../keys.ts';
import { vaultAccount } from './account.ts';
import {
  correctEntry,
  createEntry,
  type EntryCursor,
  type EntryState,
  forgetEntry,
  getEntry,
  listEntries,
  type NewEntry,
  quarantineEntry,
  releaseEntry,
  versionsOf,
} from './entries.ts';
import { checkIntegrity } from './integrity.ts';
import { searchVault } from './search.ts';

const WORKSPACE: KeyKind = 'workspace';

export function vaultService(db: Db) {
  return {
    create: (tenantId: string, input: NewEntry) => createEntry(db, tenantId, input),
    get: (tenantId: string, id: string) => getEntry(db, tenantId, id),
    list: (tenantId: string, filter: { state?: EntryState; tag?: string }, page: { limit: number; after?: EntryCursor }) =>
      listEntries(db, tenantId, filter, page),
    versions: (tenantId: string, id: string) => versionsOf(db, tenantId, id),
    correct: (tenantId: string, id: string, input: Parameters<typeof correctEntry>[3]) => correctEntry(db, tenantId, id, input),
    quarantine: (tenantId: string, id: string, reason: string | null) => quarantineEntry(db, tenantId, id, reason),
    release: (tenantId: string, id: string) => releaseEntry(db, tenantId, id),
    async forget(tenantId: string, id: string, actorKeyId: string | null = null) {
      const tombstone = await forgetEntry(db, tenantId, id);
      await recordAudit(db, { tenantId, keyId: actorKeyId, action: 'vault.forget', target: `vault_entry:${id}`, subject: { id, digest: tombstone.digest } });
      return tombstone;
    },
    search: (tenantId: string, query: Parameters<typeof searchVault>[2]) => searchVault(db, tenantId, query),
    integrity: (tenantId: string) => checkIntegrity(db, tenantId),
    account: (tenantId: string) => vaultAccount(db, tenantId),
    keys: {
      list: (tenantId: string) => listKeys(db, { tenantId, kind: WORKSPACE }),
      async create(tenantId: string, label: string | undefined, actorKeyId: string | null = null) {
        const key = await createKey(db, { tenantId, kind: WORKSPACE, label });
        await recordAudit(db, { tenantId, keyId: actorKeyId, action: 'key.create', target: `key:${key.id}`, subject: { id: key.id, kind: key.kind } });
        return key;
      },
      async revoke(tenantId: string, keyId: string, actorKeyId: string | null = null) {
        const done = await revokeKey(db, keyId, { tenantId, kind: WORKSPACE });
        if (done) await recordAudit(db, { tenantId, keyId: actorKeyId, action: 'key.revoke', target: `key:${keyId}`, subject: { id: keyId } });
        return done;
      },
    },
  };
}

export type VaultService = ReturnType<typeof vaultService>;
