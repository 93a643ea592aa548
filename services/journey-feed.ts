// One reader of the journey table per process, fanning its rows out to everyone in the process who
// follows a tenant's runs (GET /v1/agent-runs/events, the inbox's live list). However many pages are
// open, the database sees one indexed read every `pollMs` while anyone listens, and none otherwise.
//
// Runs write their events concurrently, so an id can commit after a higher one was read. Each poll
// therefore reads again from where the feed stood `lookbackMs` ago and skips the ids it already sent:
// an event whose transaction took less than that to commit is never missed, and none is sent twice.
// A feed that starts (its first listener arrived) does the same: it reads from where the table stood
// `lookbackMs` ago and counts what is already committed as sent, so a listener that waits for
// `listening()` before reading the table itself misses nothing recorded after that read.
import { and, asc, gt, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { journeyEvents } from '../db/schema.ts';
import type { RunEvent } from '../domain/runs/run-event.ts';
import { progressOfJourneyEvent } from './run-progress.ts';
import { isRunStatus } from '../domain/runs/states.ts';

export type FeedListener = (event: RunEvent) => void;

export interface JourneyFeed {
  /** Calls `listener` with each run event of the tenant recorded from now on; returns the unsubscribe. */
  subscribe(tenantId: string, listener: FeedListener): () => void;
  /**
   * Resolves once the feed knows where it starts: every event committed from then on reaches the
   * listeners. A listener that catches up by reading the table waits for this first. Bounded: it
   * resolves after LISTENING_WAIT_MS however the start goes (the database may be away).
   */
  listening(): Promise<void>;
  /** Listeners subscribed now (all tenants). */
  readonly size: number;
  close(): void;
}

export interface JourneyFeedOptions {
  pollMs: number;
  lookbackMs: number;
  /** Rows read per query; a full page is followed by the next in the same poll. */
  page: number;
}

/** The longest listening() waits for a starting feed (normally two indexed reads). */
const LISTENING_WAIT_MS = 2_000;

export const DEFAULT_FEED: JourneyFeedOptions = { pollMs: 250, lookbackMs: 5_000, page: 500 };

export function journeyFeed(db: Db, options: Partial<JourneyFeedOptions> = {}): JourneyFeed {
  const { pollMs, lookbackMs, page } = { ...DEFAULT_FEED, ...options };
  const listeners = new Map<string, Set<FeedListener>>();
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let closed = false;
  /** Where each poll starts reading (exclusive), and the ids above it that were already sent. */
  let from: number | undefined;
  const sent = new Set<number>();
  /** The highest id read, stamped with when it was read: `from` moves to each mark once it is lookbackMs old. */
  const marks: { at: number; id: number }[] = [];
  /** Bumped when the last listener leaves: a poll that began before it delivers nothing. */
  let generation = 0;
  /** Who waits in listening() for the feed to start. */
  const waiting: (() => void)[] = [];
  const wakeWaiting = () => {
    for (const wake of waiting.splice(0)) wake();
  };

  const schedule = (ms: number) => {
    if (!closed && size > 0 && !timer) timer = setTimeout(tick, ms);
  };

  /**
   * Where a starting feed reads from: the table's end as it stood lookbackMs ago (by commit order an id
   * below the end can still commit); the events committed since then are marked sent, as if read.
   */
  async function start(): Promise<{ since: number; committed: number[] }> {
    const [row] = await db
      .select({ max: sql<number>`coalesce(max(${journeyEvents.id}), 0)`.mapWith(Number) })
      .from(journeyEvents)
      .where(sql`${journeyEvents.createdAt} < now() - make_interval(secs => ${lookbackMs / 1_000})`);
    const since = row?.max ?? 0;
    const rows = await db.select({ id: journeyEvents.id }).from(journeyEvents).where(gt(journeyEvents.id, since));
    return { since, committed: rows.map((r) => r.id) };
  }

  /** The run events above `after`, a page of them, oldest first. */
  function read(after: number) {
    return db
      .select({
        id: journeyEvents.id,
        tenantId: journeyEvents.tenantId,
        runId: journeyEvents.runId,
        kind: journeyEvents.kind,
        state: journeyEvents.state,
        progress: journeyEvents.progress,
        createdAt: journeyEvents.createdAt,
      })
      .from(journeyEvents)
      .where(and(gt(journeyEvents.id, after), isNotNull(journeyEvents.runId)))
      .orderBy(asc(journeyEvents.id))
      .limit(page);
  }

  function deliver(row: Awaited<ReturnType<typeof read>>[number]) {
    if (sent.has(row.id)) return;
    sent.add(row.id);
    const progress = progressOfJourneyEvent({ ...row, stepsFinished: 0, planSteps: 0 });
    if (!progress || row.runId === null) return;
    const event: RunEvent = {
      id: String(row.id),
      kind: row.kind,
      run_id: row.runId,
      state: isRunStatus(row.state) ? row.state : progress.state,
      progress,
      created_at: row.createdAt.toISOString(),
    };
    for (const listener of listeners.get(row.tenantId) ?? []) listener(event);
  }

  /** Reads everything above `from`, page after page (more than a page can fall within the lookback), and delivers what was not sent. */
  async function poll(): Promise<void> {
    const current = generation;
    if (from === undefined) {
      const startedAt = Date.now();
      const { since, committed } = await start();
      if (current !== generation) return;
      for (const id of committed) sent.add(id);
      marks.push({ at: startedAt, id: committed.reduce((max, id) => Math.max(max, id), since) });
      from = since;
      wakeWaiting();
    }
    const now = Date.now();
    let highest: number | undefined;
    for (let after = from; ; ) {
      const rows = await read(after);
      if (current !== generation) return;
      for (const row of rows) deliver(row);
      highest = rows.at(-1)?.id ?? highest;
      if (rows.length < page || highest === undefined) break;
      after = highest;
    }
    if (highest !== undefined) marks.push({ at: now, id: highest });
    advance(now);
  }

  /** Moves `from` to the newest mark at least lookbackMs old and forgets the sent ids at or below it. */
  function advance(now: number) {
    let moved = false;
    while (marks.length > 0 && now - marks[0]!.at >= lookbackMs) {
      from = Math.max(from ?? 0, marks.shift()!.id);
      moved = true;
    }
    if (moved) for (const id of sent) if (id <= from!) sent.delete(id);
  }

  async function tick() {
    timer = undefined;
    if (running || closed || size === 0) return;
    running = true;
    let next = pollMs;
    try {
      await poll();
    } catch {
      // The database is away: try again later from the same place; nothing is skipped.
      next = Math.min(pollMs * 8, 2_000);
    } finally {
      running = false;
    }
    schedule(next);
  }

  return {
    subscribe(tenantId, listener) {
      const set = listeners.get(tenantId) ?? new Set<FeedListener>();
      listeners.set(tenantId, set);
      set.add(listener);
      size += 1;
      schedule(0);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        set.delete(listener);
        if (set.size === 0) listeners.delete(tenantId);
        size -= 1;
        if (size === 0) {
          // Nobody listens: stop reading, and start from the table's end when someone does again.
          clearTimeout(timer);
          timer = undefined;
          generation += 1;
          from = undefined;
          sent.clear();
          marks.length = 0;
          wakeWaiting();
        }
      };
    },
    listening() {
      if (from !== undefined || closed) return Promise.resolve();
      return new Promise<void>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        // Given up on: no longer waiting (a database away for long must not pile up waiters).
        timer = setTimeout(() => {
          const at = waiting.indexOf(wake);
          if (at >= 0) waiting.splice(at, 1);
          resolve();
        }, LISTENING_WAIT_MS);
        waiting.push(wake);
      });
    },
    get size() {
      return size;
    },
    close() {
      closed = true;
      clearTimeout(timer);
      listeners.clear();
      wakeWaiting();
    },
  };
}
