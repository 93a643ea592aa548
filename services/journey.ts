// Journey events: content-free lifecycle history (kind, run, state, time).
// Writes are idempotent by event key; retention is bounded by configuration
// (JOURNEY_RETENTION_DAYS): a Schedule purges every tenant's expired events
// hourly, chat-only tenants included, and a run's end purges its tenant's.
import { and, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { journeyEvents } from '../db/schema.ts';

export interface JourneyEventInput {
  tenantId: string;
  runId: string | null;
  kind: string;
  state: string | null;
  progress?: unknown;
  eventKey: string;
}

export async function recordJourneyEvent(db: Db, event: JourneyEventInput): Promise<void> {
  await db.insert(journeyEvents).values(event).onConflictDoNothing({ target: journeyEvents.eventKey });
}

export async function listJourneyEvents(db: Db, tenantId: string, limit: number) {
  return db
    .select({ id: journeyEvents.id, kind: journeyEvents.kind, runId: journeyEvents.runId, state: journeyEvents.state, createdAt: journeyEvents.createdAt })
    .from(journeyEvents)
    .where(eq(journeyEvents.tenantId, tenantId))
    .orderBy(desc(journeyEvents.id))
    .limit(limit);
}

/**
 * Deletes every tenant's events older than the retention window, oldest first in batches of `batchSize`
 * (ids grow with time, so each batch is read off the primary key), calling `onBatch` after each.
 * Returns how many it deleted. Run by the journey retention Schedule (runtime/schedules.ts).
 */
export async function purgeExpiredJourneyEvents(
  db: Db,
  retentionDays: number,
  options: { batchSize?: number; onBatch?: () => void } = {},
): Promise<number> {
  const batchSize = options.batchSize ?? 5_000;
  let deleted = 0;
  for (;;) {
    const expired = db
      .select({ id: journeyEvents.id })
      .from(journeyEvents)
      .where(lt(journeyEvents.createdAt, sql`now() - make_interval(days => ${retentionDays})`))
      .orderBy(journeyEvents.id)
      .limit(batchSize);
    const rows = await db.delete(journeyEvents).where(inArray(journeyEvents.id, expired)).returning({ id: journeyEvents.id });
    deleted += rows.length;
    options.onBatch?.();
    if (rows.length < batchSize) return deleted;
  }
}

/** Deletes the tenant's events older than the retention window. */
export async function purgeJourneyEvents(db: Db, tenantId: string, retentionDays: number): Promise<void> {
  await db
    .delete(journeyEvents)
    .where(and(eq(journeyEvents.tenantId, tenantId), lt(journeyEvents.createdAt, sql`now() - make_interval(days => ${retentionDays})`)));
}
