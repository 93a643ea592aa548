// API key lifecycle: mint (shown once), list (metadata only), revoke, and
// authenticate a bearer secret for one kind of route.
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { apiKeys, tenants } from '../db/schema.ts';
import { APPROVER_NAME_MAX, hashKey, type KeyKind, looksLikeKey, mintKey } from '../domain/api-keys.ts';
import { newId } from '../domain/ids.ts';
import { isUnstorable } from '../domain/storable-text.ts';
import { type ActiveKey, KEY_REVOKED_CHANNEL, type KeyCache } from './key-cache.ts';
import { invalidateLocally } from './notified-cache.ts';
import { grantCredits } from './ledger.ts';
import { ensureTenant, tenantById } from './tenants.ts';

export interface KeyRecord {
  id: string;
  tenant: string;
  tenantId: string;
  kind: KeyKind;
  prefix: string;
  label: string | null;
  /** An approver key's person; null for other kinds. */
  name: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface CreatedKey extends KeyRecord {
  /** The secret; returned only here, never stored or shown again. */
  secret: string;
}

/** Who a request authenticated as. */
export interface Principal {
  keyId: string;
  tenantId: string;
  kind: KeyKind;
  /** An approver key's person: who the API says decided, never what a caller says. */
  name: string | null;
}

/** Why a key was not created: stable codes, for the CLI and the API to word. */
export class KeyRefused extends Error {
  constructor(
    readonly code: 'name_required' | 'name_too_long' | 'name_unprintable' | 'name_only_for_approvers' | 'name_taken',
    message: string,
  ) {
    super(message);
    this.name = 'KeyRefused';
  }
}

/** An approver's name as stored: trimmed, one line, 1 to APPROVER_NAME_MAX characters; refused otherwise. */
function approverName(kind: KeyKind, name: string | undefined): string | null {
  if (kind !== 'approver') {
    if (name !== undefined) throw new KeyRefused('name_only_for_approvers', 'only an approver key has a name; give a core or workspace key a --label');
    return null;
  }
  const trimmed = (name ?? '').replace(/\s+/g, ' ').trim();
  if (!trimmed) throw new KeyRefused('name_required', 'an approver key needs the name of the person who holds it (--name "Dana Lee")');
  // Shown in receipts and the inbox: printable text only (no control, format or unpaired surrogate characters).
  if (/[\p{Cc}\p{Cf}\p{Cs}]/u.test(trimmed) || isUnstorable(trimmed)) throw new KeyRefused('name_unprintable', 'an approver name must be printable text');
  if ([...trimmed].length > APPROVER_NAME_MAX) throw new KeyRefused('name_too_long', `an approver name is at most ${APPROVER_NAME_MAX} characters`);
  return trimmed;
}

type KeyInput = { kind: KeyKind; label?: string; name?: string } & ({ tenant: string } | { tenantId: string });

/**
 * Mints a key. An approver key needs its person's name, unique among the tenant's active approver keys
 * (distinct approvers are distinct names); KeyRefused says why one is not created.
 */
export async function createKey(db: Db, input: KeyInput): Promise<CreatedKey> {
  const name = approverName(input.kind, input.name);
  const tenant = 'tenantId' in input ? await tenantById(db, input.tenantId) : await ensureTenant(db, input.tenant);
  const minted = mintKey(input.kind);
  const [row] = await db
    .insert(apiKeys)
    .values({
      id: newId('key'),
      tenantId: tenant.id,
      kind: input.kind,
      prefix: minted.prefix,
      secretHash: minted.hash,
      label: input.label ?? null,
      name,
    })
    .onConflictDoNothing({ target: [apiKeys.tenantId, apiKeys.name], where: sql`${apiKeys.kind} = 'approver' and ${apiKeys.revokedAt} is null` })
    .returning();
  if (!row) throw new KeyRefused('name_taken', `tenant "${tenant.name}" already has an active approver key named "${name}"`);
  return { ...toRecord(row, tenant.name), secret: minted.secret };
}

export async function listKeys(db: Db, filter: { tenant?: string; tenantId?: string; kind?: KeyKind } = {}): Promise<KeyRecord[]> {
  const rows = await db
    .select({ key: apiKeys, tenantName: tenants.name })
    .from(apiKeys)
    .innerJoin(tenants, eq(apiKeys.tenantId, tenants.id))
    .where(
      and(
        filter.tenant ? eq(tenants.name, filter.tenant) : undefined,
        filter.tenantId ? eq(apiKeys.tenantId, filter.tenantId) : undefined,
        filter.kind ? eq(apiKeys.kind, filter.kind) : undefined,
      ),
    )
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  return rows.map((r) => toRecord(r.key, r.tenantName));
}

/**
 * Revokes a key by id (optionally only within one tenant and kind); false when no such active key.
 * The same transaction announces it on KEY_REVOKED_CHANNEL (delivered on commit), so every API
 * process drops the key from its cache (services/key-cache.ts); this process's caches at once.
 */
export async function revokeKey(db: Db, keyId: string, scope: { tenantId?: string; kind?: KeyKind } = {}): Promise<boolean> {
  const revoked = await db.transaction(async (tx) => {
    const rows = await tx
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(
        and(
          eq(apiKeys.id, keyId),
          isNull(apiKeys.revokedAt),
          scope.tenantId ? eq(apiKeys.tenantId, scope.tenantId) : undefined,
          scope.kind ? eq(apiKeys.kind, scope.kind) : undefined,
        ),
      )
      .returning({ id: apiKeys.id });
    if (rows.length > 0) await tx.execute(sql`select pg_notify(${KEY_REVOKED_CHANNEL}, ${keyId})`);
    return rows.length > 0;
  });
  if (revoked) invalidateLocally(db, KEY_REVOKED_CHANNEL, keyId);
  return revoked;
}

/** Whether the key with this id is active (not revoked): what an open event stream asks at each keep-alive. */
export async function keyIsActive(db: Db, keyId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
  return row !== undefined;
}

/** The active key whose secret has this hash, or null (the database lookup behind the cache). */
export async function activeKeyByHash(db: Db, hash: string): Promise<ActiveKey | null> {
  const [row] = await db
    .select({ id: apiKeys.id, tenantId: apiKeys.tenantId, kind: apiKeys.kind, name: apiKeys.name })
    .from(apiKeys)
    .where(and(eq(apiKeys.secretHash, hash), isNull(apiKeys.revokedAt)));
  return row ?? null;
}

/**
 * The principal for an active key of the required kind, or null; through `cache` when given. A key the
 * cache holds is answered at once, not as a promise: every authenticated request asks, and each
 * promise on that path costs it (more so with tracing on, whose context follows every promise).
 */
export function authenticate(db: Db, secret: string, kinds: readonly KeyKind[], cache?: KeyCache): Principal | null | Promise<Principal | null> {
  if (!looksLikeKey(secret)) return null;
  const hash = hashKey(secret);
  const cached = cache?.peek(hash);
  if (cached) return principalOf(cached, kinds);
  const row = cache ? cache.get(hash, () => activeKeyByHash(db, hash)) : activeKeyByHash(db, hash);
  return row.then((found) => principalOf(found, kinds));
}

const principalOf = (row: ActiveKey | null, kinds: readonly KeyKind[]): Principal | null =>
  row && kinds.includes(row.kind) ? { keyId: row.id, tenantId: row.tenantId, kind: row.kind, name: row.name } : null;

export const DEV_TENANT = 'dev';

/** The dev tenant's approver, as the first start names them. */
export const DEV_APPROVER_NAME = 'Dev Approver';

/**
 * First start: creates the dev tenant with a core, a workspace and an approver key, and returns them so
 * they can be printed once. A dev tenant from before approver keys gets its approver key at its next
 * start, returned alone. Null when there is nothing new (a restart reuses the keys; an approver key
 * that was revoked is not replaced).
 */
export async function ensureDevKeys(db: Db, startingCredits: number): Promise<CreatedKey[] | null> {
  // One transaction: a database lost part-way leaves no key behind whose secret was never shown,
  // so start-up can simply run this again once the database is back (runtime/startup.ts).
  return db.transaction(async (tx) => {
    const existing = await listKeys(tx, { tenant: DEV_TENANT });
    const approver = () => createKey(tx, { tenant: DEV_TENANT, kind: 'approver', name: DEV_APPROVER_NAME, label: 'dev (first start)' });
    if (existing.length > 0) return existing.some((k) => k.kind === 'approver') ? null : [await approver()];
    const core = await createKey(tx, { tenant: DEV_TENANT, kind: 'core', label: 'dev (first start)' });
    const workspace = await createKey(tx, { tenant: DEV_TENANT, kind: 'workspace', label: 'dev (first start)' });
    if (startingCredits > 0) {
      await grantCredits(tx, { tenantId: core.tenantId, amount: startingCredits, entryKey: 'dev-starting-balance', note: 'dev tenant starting balance' });
    }
    return [core, workspace, await approver()];
  });
}

function toRecord(row: typeof apiKeys.$inferSelect, tenantName: string): KeyRecord {
  return {
    id: row.id,
    tenant: tenantName,
    tenantId: row.tenantId,
    kind: row.kind,
    prefix: row.prefix,
    label: row.label,
    name: row.name,
    createdAt: row.createdAt,
    revokedAt: row.revokedAt,
  };
}
