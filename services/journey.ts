// Journey events: content-free lifecycle history (kind, run, state, time).
// Writes are idempotent by event key; retention is bounded by configuration
// (JOURNEY_RETENTION_DAYS): a Schedule purges every tenant's expired events
// hourly, chat-only tenants included (the one place events are purged).
import { and, asc, desc, eq, gt, inArray, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { jsonbParam, preparedPer } from '../db/prepared.ts';
import { journeyEvents, runs } from '../db/schema.ts';
import type { RunProgress } from '../domain/runs/progress.ts';
import { progressOfJourneyEvent } from './run-progress.ts';

export interface JourneyEventInput {
  tenantId: string;
  runId: string | null;
  kind: string;
  state: string | null;
  progress?: unknown;
  eventKey: string;
}

/** Whether the event keyed `eventKey` is recorded (a run's move `<run_id>:<seq>` that was written before). */
export async function journeyEventRecorded(db: Db, eventKey: string): Promise<boolean> {
  const rows = await db.select({ id: journeyEvents.id }).from(journeyEvents).where(eq(journeyEvents.eventKey, eventKey)).limit(1);
  return rows.length > 0;
}

// Ten a run (one per move): built once per handle, sent as a named prepared statement (db/prepared.ts).
const insertJourneyEvent = preparedPer((db) =>
  db
    .insert(journeyEvents)
    .values({
      tenantId: sql.placeholder('tenantId'),
      runId: sql.placeholder('runId'),
      kind: sql.placeholder('kind'),
      state: sql.placeholder('state'),
      progress: sql`${sql.placeholder('progress')}::jsonb`,
      eventKey: sql.placeholder('eventKey'),
    })
    .onConflictDoNothing({ target: journeyEvents.eventKey })
    .prepare('gws_insert_journey_event'),
);

export async function recordJourneyEvent(db: Db, event: JourneyEventInput): Promise<void> {
  await insertJourneyEvent(db).execute({ ...event, progress: jsonbParam(event.progress) });
}

export interface JourneyQuery {
  /** Rows to return, at most. */
  limit: number;
  /** Only this run's events. */
  runId?: string;
  /** Newest first, strictly older than this event id (a list page after the first). */
  before?: number;
  /** Oldest first, strictly newer than this event id (a run's event stream). Wins over `before`. */
  after?: number;
}

export interface JourneyRow {
  id: number;
  kind: string;
  runId: string | null;
  state: string | null;
  /** Recorded, or derived for events recorded before progress was (services/run-progress.ts); null for events not about a run state. */
  progress: RunProgress | null;
  createdAt: Date;
}

export interface JourneyPage {
  rows: JourneyRow[];
  /** More rows follow the last one in the same order. */
  more: boolean;
}

/**
 * The tenant's events, newest first, or with `after` oldest first. One run's events are read off
 * journey_events_run_idx (run_id, id); the tenant's off journey_events_tenant_idx (tenant_id, id).
 */
export async function listJourneyEvents(db: Db, tenantId: string, query: JourneyQuery): Promise<JourneyPage> {
  const conditions = [eq(journeyEvents.tenantId, tenantId)];
  if (query.runId !== undefined) conditions.push(eq(journeyEvents.runId, query.runId));
  if (query.after !== undefined) conditions.push(gt(journeyEvents.id, query.after));
  else if (query.before !== undefined) conditions.push(lt(journeyEvents.id, query.before));
  // What deriving progress needs, computed only for events that recorded none.
  const stepsFinished = sql<
    number | null
  >`case when ${journeyEvents.progress} is null and ${journeyEvents.runId} is not null then (select count(*) from journey_events f where f.run_id = ${journeyEvents.runId} and f.kind = 'run.step_finished' and f.id <= ${journeyEvents.id}) end`.mapWith(
    Number,
  );
  const planSteps = sql<
    number | null
  >`case when ${journeyEvents.progress} is null and jsonb_typeof(${runs.plan}->'steps') = 'array' then jsonb_array_length(${runs.plan}->'steps') else 0 end`.mapWith(
    Number,
  );
  const rows = await db
    .select({
      id: journeyEvents.id,
      kind: journeyEvents.kind,
      runId: journeyEvents.runId,
      state: journeyEvents.state,
      progress: journeyEvents.progress,
      createdAt: journeyEvents.createdAt,
      stepsFinished,
      planSteps,
    })
    .from(journeyEvents)
    .leftJoin(runs, eq(runs.id, journeyEvents.runId))
    .where(and(...conditions))
    .orderBy(query.after !== undefined ? asc(journeyEvents.id) : desc(journeyEvents.id))
    .limit(query.limit + 1);
  return {
    rows: rows.slice(0, query.limit).map((r) => ({
      id: r.id,
      kind: r.kind,
      runId: r.runId,
      state: r.state,
      progress: r.runId === null ? null : progressOfJourneyEvent({ ...r, stepsFinished: r.stepsFinished ?? 0, planSteps: r.planSteps ?? 0 }),
      createdAt: r.createdAt,
    })),
    more: rows.length > query.limit,
  };
}

/**
 * Deletes every tenant's events older than the retention window, oldest first in batches of `batchSize`
 * (ids grow with time, so each batch is read off the primary key), calling `onBatch` after each.
 * Returns how many it deleted. Run by the journey retention Schedule (runtime/schedules.ts).
 */
export async function purgeExpiredJourneyEvents(db: Db, retentionDays: number, options: { batchSize?: number; onBatch?: () => void } = {}): Promise<number> {
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
