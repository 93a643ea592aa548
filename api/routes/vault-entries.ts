// Customer vault entries (workspace key): create, list, read, history,
// correct, quarantine, release, forget, search and export.
import { z } from 'zod';
import type { EntryCursor, EntryRow } from '../../services/vault/entries.ts';
import { effectiveState } from '../../services/vault/entries.ts';
import type { VaultService } from '../../services/vault/index.ts';
import { ErrorObject, limitQuery } from '../contract/common.ts';
import { decodeCursor, encodeCursor } from '../contract/cursor.ts';
import { NDJSON_FAILURE_NOTE, ndjsonExport } from '../contract/ndjson.ts';
import { defineRoute } from '../contract/route.ts';
import { CorrectVaultEntry, CreateVaultEntry, VaultEntry, VaultEntryList, VaultSearchResult, VaultVersions } from '../schemas/vault.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function entryView(row: EntryRow) {
  return {
    object: 'vault_entry' as const,
    id: row.id,
    state: effectiveState(row),
    subject: row.subject,
    content: row.content,
    tags: row.tags,
    source: row.source,
    version: row.version,
    digest: row.digest,
    expires_at: iso(row.expiresAt),
    quarantine_reason: row.quarantineReason,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    forgotten_at: iso(row.forgottenAt),
  };
}

const EntryParams = z.object({ entry_id: z.string().min(1).max(64) });
const tags = ['vault'];
const notFound = { description: 'No such entry for your tenant.', schema: ErrorObject };
const forgotten = { description: 'The entry was forgotten (code vault_entry_forgotten).', schema: ErrorObject };
const EXPORT_PAGE = 200;

export function vaultEntryRoutes(deps: { vault: VaultService }) {
  const { vault } = deps;
  return [
    defineRoute({
      method: 'post',
      path: '/v1/vault/entries',
      operationId: 'createVaultEntry',
      summary: 'Add an entry to the vault',
      tags,
      auth: 'workspace',
      request: { body: CreateVaultEntry },
      responses: { 201: { description: 'The new entry (version 1).', schema: VaultEntry } },
      async handler({ principal, body }) {
        const { entry } = await vault.create(principal!.tenantId, {
          subject: body.subject,
          content: body.content,
          tags: body.tags,
          source: body.source,
          expiresAt: body.expires_at ? new Date(body.expires_at) : null,
        });
        return { status: 201, body: entryView(entry) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vault/entries',
      operationId: 'listVaultEntries',
      summary: 'List entries, including quarantined ones for review',
      description: 'Newest first. Filter by the state a reader sees, or by tag.',
      tags,
      auth: 'workspace',
      request: {
        query: z.object({
          state: z.enum(['active', 'quarantined', 'expired', 'forgotten']).optional(),
          tag: z.string().min(1).max(50).optional(),
          limit: limitQuery(100, 20),
          cursor: z.string().max(512).optional(),
        }),
      },
      responses: { 200: { description: 'One page of entries.', schema: VaultEntryList } },
      async handler({ principal, query }) {
        const page = await vault.list(
          principal!.tenantId,
          { state: query.state, tag: query.tag },
          {
            limit: query.limit,
            after: query.cursor ? decodeCursor(query.cursor) : undefined,
          },
        );
        return {
          status: 200,
          body: { object: 'list', data: page.rows.map(entryView), has_more: page.next !== null, next_cursor: page.next ? encodeCursor(page.next) : null },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vault/search',
      operationId: 'searchVault',
      summary: 'Full-text search, most relevant first',
      description: 'Searches active, unexpired entries only: quarantined, expired and forgotten entries never match.',
      tags,
      auth: 'workspace',
      request: {
        query: z.object({
          q: z.string().max(500).trim().min(1),
          tag: z.string().min(1).max(50).optional(),
          subject: z.string().min(1).max(200).optional().meta({ description: 'Case-insensitive text contained in the subject.' }),
          limit: limitQuery(50, 10),
        }),
      },
      responses: { 200: { description: 'Ranked matches.', schema: VaultSearchResult } },
      async handler({ principal, query }) {
        const hits = await vault.search(principal!.tenantId, query);
        return { status: 200, body: { object: 'list', data: hits.map((h) => ({ score: h.rank, entry: entryView(h.entry) })) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vault/export',
      operationId: 'exportVault',
      summary: 'Export live entries as NDJSON',
      description: `Every active, unexpired entry, one VaultEntry JSON object per line, newest first. ${NDJSON_FAILURE_NOTE}`,
      tags,
      auth: 'workspace',
      responses: { 200: { description: 'application/x-ndjson stream of VaultEntry objects.', contentType: 'application/x-ndjson' } },
      handler({ principal, ctx }) {
        return ndjsonExport(
          ctx,
          (after: EntryCursor | undefined) => vault.list(principal!.tenantId, { state: 'active' }, { limit: EXPORT_PAGE, after }),
          entryView,
          'vault.ndjson',
        );
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vault/entries/{entry_id}',
      operationId: 'getVaultEntry',
      summary: 'One entry (a tombstone once forgotten)',
      tags,
      auth: 'workspace',
      request: { params: EntryParams },
      responses: { 200: { description: 'The entry.', schema: VaultEntry }, 404: notFound },
      async handler({ principal, params }) {
        return { status: 200, body: entryView(await vault.get(principal!.tenantId, params.entry_id)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vault/entries/{entry_id}/versions',
      operationId: 'listVaultEntryVersions',
      summary: 'Correction history of an entry',
      tags,
      auth: 'workspace',
      request: { params: EntryParams },
      responses: { 200: { description: 'Every version, oldest first.', schema: VaultVersions }, 404: notFound },
      async handler({ principal, params }) {
        const entry = await vault.get(principal!.tenantId, params.entry_id);
        const versions = await vault.versions(principal!.tenantId, params.entry_id);
        return {
          status: 200,
          body: {
            object: 'list',
            data: versions.map((v) => ({
              version: v.version,
              subject: v.subject,
              content: v.content,
              digest: v.digest,
              reason: v.reason,
              current: v.version === entry.version,
              created_at: v.createdAt.toISOString(),
            })),
          },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/vault/entries/{entry_id}/corrections',
      operationId: 'correctVaultEntry',
      summary: 'Correct an entry',
      description: 'Writes a new version and keeps the history; the old version is never recalled or searched again.',
      tags,
      auth: 'workspace',
      request: { params: EntryParams, body: CorrectVaultEntry },
      responses: { 200: { description: 'The entry at its new version.', schema: VaultEntry }, 404: notFound, 409: forgotten },
      async handler({ principal, params, body }) {
        const row = await vault.correct(principal!.tenantId, params.entry_id, {
          content: body.content,
          subject: body.subject,
          tags: body.tags,
          expiresAt: body.expires_at === undefined ? undefined : body.expires_at === null ? null : new Date(body.expires_at),
          reason: body.reason,
        });
        return { status: 200, body: entryView(row) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/vault/entries/{entry_id}/quarantine',
      operationId: 'quarantineVaultEntry',
      summary: 'Quarantine an entry',
      description: 'A quarantined entry is never recalled or searched, but stays listable for review. Idempotent.',
      tags,
      auth: 'workspace',
      request: { params: EntryParams, body: z.strictObject({ reason: z.string().max(500).trim().optional() }).meta({ id: 'QuarantineRequest' }) },
      responses: { 200: { description: 'The quarantined entry.', schema: VaultEntry }, 404: notFound, 409: forgotten },
      async handler({ principal, params, body }) {
        return { status: 200, body: entryView(await vault.quarantine(principal!.tenantId, params.entry_id, body.reason ?? null)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/vault/entries/{entry_id}/release',
      operationId: 'releaseVaultEntry',
      summary: 'Release an entry from quarantine',
      tags,
      auth: 'workspace',
      request: { params: EntryParams },
      responses: {
        200: { description: 'The entry, active again.', schema: VaultEntry },
        404: notFound,
        409: { description: 'Forgotten, or not quarantined (code vault_entry_not_quarantined).', schema: ErrorObject },
      },
      async handler({ principal, params }) {
        return { status: 200, body: entryView(await vault.release(principal!.tenantId, params.entry_id)) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/vault/entries/{entry_id}',
      operationId: 'forgetVaultEntry',
      summary: 'Forget an entry for good',
      description:
        "Erases the content, tags and every version's text, and so its search index, for good. A content-free tombstone with the last digest stays for audit. Idempotent.",
      tags,
      auth: 'workspace',
      request: { params: EntryParams },
      responses: { 200: { description: 'The tombstone.', schema: VaultEntry }, 404: notFound },
      async handler({ principal, params }) {
        return { status: 200, body: entryView(await vault.forget(principal!.tenantId, params.entry_id, principal!.keyId)) };
      },
    }),
  ];
}
