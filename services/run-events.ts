// Follows one run's journey events as they are recorded: the source of the
// run's server-sent event stream (api/routes/agent-run-events.ts). It reads
// the journey table (one indexed read: run_id, id > last) when the process's
// journey feed (services/journey-feed.ts) says the run changed, and otherwise
// only once per idle interval, so idle followers cost the database almost
// nothing however many there are. Without a feed it polls, backing off while
// nothing happens. It ends after the event of a terminal state.
//
// A run's events are written one after another by its workflow (each
// transition waits for the previous one), so their ids grow in the order they
// are committed and "id > last" never skips one.
import type { RunEvent } from '../domain/runs/run-event.ts';
import { isRunStatus, isTerminal } from '../domain/runs/states.ts';
import type { JourneyPage, JourneyQuery, JourneyRow } from './journey.ts';
import type { JourneyFeed } from './journey-feed.ts';
import { progressOfRun } from './run-progress.ts';
import type { RunRow } from './runs.ts';

export type { RunEvent };

/**
 * The id of the closing event made from the run's row when the run ended and no journey event of its
 * end is retained (journey retention purged it). Resuming after it answers that there is nothing more.
 */
export const RUN_END_EVENT_ID = 'run_end';

export interface RunEventSource {
  /** The tenant's run; throws (404) when there is none. */
  getRun(tenantId: string, runId: string): Promise<RunRow>;
  listJourneyEvents(tenantId: string, query: JourneyQuery): Promise<JourneyPage>;
}

export interface FollowOptions {
  /** Wait after a poll that found events; doubles after each poll that found none, up to maxPollMs. */
  pollMs: number;
  maxPollMs: number;
  /**
   * A run's row says it ended a moment before its terminal event is written (the same activity writes
   * both): only a run that ended at least this long ago, with no event left to send, is closed from its row.
   */
  terminalGraceMs: number;
  /** Consecutive failed reads tolerated (each waited out like an empty poll) before the error is thrown. */
  maxFailures: number;
  /**
   * The process's feed of new journey events: with it, a follower reads when its run changed, and
   * otherwise once every idleMs (a safety net for an event the feed could not see).
   */
  changes?: Pick<JourneyFeed, 'subscribe' | 'listening'>;
  /** With `changes`: the longest wait between reads while nothing happens (DEFAULT_FOLLOW.idleMs when absent). */
  idleMs?: number;
  signal: AbortSignal;
}

export const DEFAULT_FOLLOW = { pollMs: 250, maxPollMs: 1_000, terminalGraceMs: 1_000, maxFailures: 5, idleMs: 120_000 } as const;

/** Events read per poll; a full page is followed by the next at once. */
const PAGE = 100;

function eventOf(row: JourneyRow, run: RunRow): RunEvent {
  // Every run event records its state; should one not, the run's own progress stands in.
  const progress = row.progress ?? progressOfRun(run);
  return {
    id: String(row.id),
    kind: row.kind,
    run_id: run.id,
    state: isRunStatus(row.state) ? row.state : progress.state,
    progress,
    created_at: row.createdAt.toISOString(),
  };
}

/** The closing event built from an ended run's row (RUN_END_EVENT_ID). */
export function runEndEvent(run: RunRow): RunEvent {
  const progress = progressOfRun(run);
  return {
    id: RUN_END_EVENT_ID,
    kind: `run.${progress.state}`,
    run_id: run.id,
    state: progress.state,
    progress,
    created_at: (run.completedAt ?? run.updatedAt).toISOString(),
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * The run's events with an id above `after`, oldest first, as they are recorded. Returns after yielding
 * the event of a terminal state (or, for an ended run whose terminal event is no longer retained, the
 * closing event built from its row), or when `signal` aborts. Throws after `maxFailures` failed reads in a row.
 */
export async function* followRun(source: RunEventSource, tenantId: string, first: RunRow, after: number, options: FollowOptions): AsyncGenerator<RunEvent> {
  const { signal } = options;
  // Listen before the first read: a change recorded while reading marks the run dirty, and is read next.
  const change = changeSignal(options.changes, tenantId, first.id, signal);
  try {
    await change.listening();
    let run = first;
    let cursor = after;
    let wait = options.pollMs;
    let failures = 0;
    while (!signal.aborted) {
      change.clear();
      let page: JourneyPage;
      try {
        page = await source.listJourneyEvents(tenantId, { runId: run.id, after: cursor, limit: PAGE });
        if (page.rows.length === 0) run = await source.getRun(tenantId, run.id);
        failures = 0;
      } catch (err) {
        failures += 1;
        if (failures >= options.maxFailures) throw err;
        wait = Math.min(wait * 2, options.maxPollMs);
        await sleep(wait, signal);
        continue;
      }
      for (const row of page.rows) {
        if (signal.aborted) return;
        cursor = row.id;
        const event = eventOf(row, run);
        yield event;
        if (isTerminal(event.state)) return;
      }
      if (page.more) continue;
      const ended = page.rows.length === 0 && isTerminal(run.status);
      if (ended && Date.now() - run.updatedAt.getTime() >= options.terminalGraceMs) {
        yield runEndEvent(run);
        return;
      }
      if (options.changes) {
        // The run's end is written a moment after its row says so: look again after the grace.
        await change.wait(ended ? options.terminalGraceMs : (options.idleMs ?? DEFAULT_FOLLOW.idleMs));
        continue;
      }
      wait = page.rows.length > 0 ? options.pollMs : Math.min(wait * 2, options.maxPollMs);
      await sleep(wait, signal);
    }
  } finally {
    change.stop();
  }
}

/** "The run changed" from the feed: set by each of its events, waited on with a timeout, cleared before each read. */
function changeSignal(feed: FollowOptions['changes'], tenantId: string, runId: string, signal: AbortSignal) {
  let dirty = false;
  let wake: (() => void) | undefined;
  const unsubscribe = feed?.subscribe(tenantId, (e) => {
    if (e.run_id !== runId) return;
    dirty = true;
    wake?.();
  });
  return {
    /** Until the feed sends what is recorded from now on. */
    listening: () => feed?.listening(),
    clear: () => {
      dirty = false;
    },
    wait: (ms: number) =>
      new Promise<void>((resolve) => {
        if (dirty || signal.aborted) return resolve();
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal.addEventListener('abort', done, { once: true });
        wake = done;
      }),
    stop: () => unsubscribe?.(),
  };
}
