import { z } from 'zod';
import { FutureDateTime } from '../contract/common.ts';

export const VaultEntry = z
  .object({
    object: z.literal('vault_entry'),
    id: z.string(),
    state: z.enum(['active', 'quarantined', 'expired', 'forgotten']).meta({
      description:
        'active: searchable and recallable. quarantined: listable for review, never searched or recalled. expired: past expires_at, never recalled. forgotten: a content-free tombstone.',
    }),
    subject: z.string().nullable(),
    content: z.string().nullable().meta({ description: 'null once forgotten.' }),
    tags: z.array(z.string()),
    source: z.string(),
    version: z.int().min(1),
    digest: z.string().meta({ description: 'sha256 of the current version (kept on the tombstone for audit).' }),
    expires_at: z.string().nullable(),
    quarantine_reason: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    forgotten_at: z.string().nullable(),
  })
  .meta({ id: 'VaultEntry' });

export const VaultEntryList = z
  .object({ object: z.literal('list'), data: z.array(VaultEntry), has_more: z.boolean(), next_cursor: z.string().nullable() })
  .meta({ id: 'VaultEntryList' });

const tags = z.array(z.string().max(50).trim().min(1)).max(20);

export const CreateVaultEntry = z
  .strictObject({
    subject: z.string().max(200).trim().min(1),
    content: z.string().max(20_000).trim().min(1),
    tags: tags.default([]),
    expires_at: FutureDateTime.optional().meta({ description: 'After this the entry is never recalled or searched.' }),
    source: z.string().max(100).trim().min(1).default('api').meta({ description: 'Where the content came from, e.g. "crm-import".' }),
  })
  .meta({ id: 'CreateVaultEntry' });

export const CorrectVaultEntry = z
  .strictObject({
    content: z.string().max(20_000).trim().min(1),
    subject: z.string().max(200).trim().min(1).optional(),
    tags: tags.optional(),
    expires_at: FutureDateTime.nullable().optional(),
    reason: z.string().max(500).trim().optional().meta({ description: 'Why it was corrected; kept in the version history.' }),
  })
  .meta({ id: 'CorrectVaultEntry' });

export const VaultVersions = z
  .object({
    object: z.literal('list'),
    data: z.array(
      z.object({
        version: z.int(),
        subject: z.string().nullable(),
        content: z.string().nullable(),
        digest: z.string(),
        reason: z.string().nullable(),
        current: z.boolean(),
        created_at: z.string(),
      }),
    ),
  })
  .meta({ id: 'VaultEntryVersions' });

export const VaultSearchResult = z
  .object({
    object: z.literal('list'),
    data: z.array(z.object({ score: z.number(), entry: VaultEntry })),
  })
  .meta({ id: 'VaultSearchResult' });

export const IntegrityReport = z
  .object({
    object: z.literal('vault_integrity_report'),
    ok: z.boolean(),
    checked_entries: z.int(),
    chain: z.object({ length: z.int(), valid: z.boolean(), broken_at_seq: z.int().nullable(), head: z.string() }),
    changed: z.array(z.string()).meta({ description: 'Entries whose text or digest no longer matches what the service last wrote.' }),
    missing: z.array(z.string()).meta({ description: 'Entries the hash chain records but the store no longer has.' }),
    unrecorded: z.array(z.string()).meta({ description: 'Entries the hash chain never recorded.' }),
    checked_at: z.string(),
  })
  .meta({ id: 'VaultIntegrityReport' });

export const WorkspaceKey = z
  .object({
    id: z.string(),
    kind: z.literal('workspace'),
    prefix: z.string(),
    label: z.string().nullable(),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
    current: z.boolean().meta({ description: 'The key that made this request.' }),
  })
  .meta({ id: 'WorkspaceKey' });

export const VaultAccount = z
  .object({
    object: z.literal('vault_account'),
    tenant_id: z.string(),
    entries: z.object({ active: z.int(), expired: z.int(), quarantined: z.int(), forgotten: z.int() }),
    storage_bytes: z.int(),
    chain_length: z.int(),
    keys: z.array(WorkspaceKey),
  })
  .meta({ id: 'VaultAccount' });
