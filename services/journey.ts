// Journey events: content-free lifecycle history (kind, run, state, time).
// Writes are idempotent by event key; retention is bounded by configuration.
import { and, desc, eq, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { journeyEvents } from '../db/schema.ts';

export interface JourneyEventInput {
  tenantId: string;
  runId: string | null;
  kind: string;
  state: string | null;
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

/** Deletes the tenant's events older than the retention window. */
export async function purgeJourneyEvents(db: Db, tenantId: string, retentionDays: number): Promise<void> {
  await db
    .delete(journeyEvents)
    .where(and(eq(journeyEvents.tenantId, tenantId), lt(journeyEvents.createdAt, sql`now() - make_interval(days => ${retentionDays})`)));
}
