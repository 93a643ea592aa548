// Audit events: a bounded, content-free receipt of every control write.
import { desc, eq, lt, and, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { auditEvents } from '../db/schema.ts';
import { digestOf } from '../domain/digest.ts';

/** How many receipts a tenant keeps; older ones are dropped on write. */
export const AUDIT_RETENTION_COUNT = 1_000;

export interface AuditInput {
  tenantId: string;
  keyId: string | null;
  action: string;
  target: string;
  /** What was written; only its digest is kept. */
  subject: unknown;
}

export type AuditEvent = typeof auditEvents.$inferSelect;

async function dropBeyondRetention(db: Db, tenantId: string): Promise<void> {
  const cutoff = sql`(select ${auditEvents.id} from ${auditEvents} where ${auditEvents.tenantId} = ${tenantId} order by ${auditEvents.id} desc offset ${AUDIT_RETENTION_COUNT - 1} limit 1)`;
  await db.delete(auditEvents).where(and(eq(auditEvents.tenantId, tenantId), lt(auditEvents.id, cutoff)));
}

export async function recordAudit(db: Db, e: AuditInput): Promise<void> {
  await db.insert(auditEvents).values({ tenantId: e.tenantId, keyId: e.keyId, action: e.action, target: e.target, digest: digestOf(e.subject) });
  await dropBeyondRetention(db, e.tenantId);
}

/**
 * Records the event unless one with `eventKey` exists (a retry, or a concurrent
 * twin of the same request). Returns the stored event, whichever request wrote
 * it, so the caller can compare its digest with its own.
 */
export async function recordAuditOnce(db: Db, e: AuditInput & { eventKey: string }): Promise<{ event: AuditEvent; inserted: boolean }> {
  const [inserted] = await db
    .insert(auditEvents)
    .values({ tenantId: e.tenantId, keyId: e.keyId, action: e.action, target: e.target, digest: digestOf(e.subject), eventKey: e.eventKey })
    .onConflictDoNothing({ target: auditEvents.eventKey })
    .returning();
  if (inserted) {
    await dropBeyondRetention(db, e.tenantId);
    return { event: inserted, inserted: true };
  }
  const existing = await findAuditEvent(db, e.tenantId, e.eventKey);
  if (!existing) throw new Error('audit event vanished between insert and select');
  return { event: existing, inserted: false };
}

/** The event recorded under `eventKey` for this tenant, if any. */
export async function findAuditEvent(db: Db, tenantId: string, eventKey: string): Promise<AuditEvent | null> {
  const [row] = await db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.tenantId, tenantId), eq(auditEvents.eventKey, eventKey)));
  return row ?? null;
}

export interface AuditQuery {
  /** Rows to return, at most. */
  limit: number;
  /** Only events on this target (a run's: `run:<run id>`), read off audit_events_target_idx. */
  target?: string;
  /** Strictly older than this event id (a page after the first). */
  before?: number;
}

/** The tenant's events, newest first; `more` says whether older ones follow the last. */
export async function listAudit(db: Db, tenantId: string, query: AuditQuery): Promise<{ rows: AuditEvent[]; more: boolean }> {
  const conditions = [eq(auditEvents.tenantId, tenantId)];
  if (query.target !== undefined) conditions.push(eq(auditEvents.target, query.target));
  if (query.before !== undefined) conditions.push(lt(auditEvents.id, query.before));
  const rows = await db
    .select()
    .from(auditEvents)
    .where(and(...conditions))
    .orderBy(desc(auditEvents.id))
    .limit(query.limit + 1);
  return { rows: rows.slice(0, query.limit), more: rows.length > query.limit };
}
