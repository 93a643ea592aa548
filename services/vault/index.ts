// The customer vault as the API sees it: every operation bound to one database.
import type { Db } from '../../db/client.ts';
import type { KeyKind } from '../../domain/api-keys.ts';
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
    forget: (tenantId: string, id: string) => forgetEntry(db, tenantId, id),
    search: (tenantId: string, query: Parameters<typeof searchVault>[2]) => searchVault(db, tenantId, query),
    integrity: (tenantId: string) => checkIntegrity(db, tenantId),
    account: (tenantId: string) => vaultAccount(db, tenantId),
    keys: {
      list: (tenantId: string) => listKeys(db, { tenantId, kind: WORKSPACE }),
      create: (tenantId: string, label?: string) => createKey(db, { tenantId, kind: WORKSPACE, label }),
      revoke: (tenantId: string, keyId: string) => revokeKey(db, keyId, { tenantId, kind: WORKSPACE }),
    },
  };
}

export type VaultService = ReturnType<typeof vaultService>;
