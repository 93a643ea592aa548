// Follows one run's journey events as they are recorded: the source of the
// run's server-sent event stream (api/routes/agent-run-events.ts). It polls
// the journey table (one indexed read: run_id, id > last) and backs off while
// nothing happens; it ends after the event of a terminal state.
//
// A run's events are written one after another by its workflow (each
// transition waits for the previous one), so their ids grow in the order they
// are committed and "id > last" never skips one.
import type { RunProgress } from '../domain/runs/progress.ts';
import { isRunStatus, isTerminal, type RunStatus } from '../domain/runs/states.ts';
import type { JourneyPage, JourneyQuery, JourneyRow } from './journey.ts';
import { progressOfRun } from './run-progress.ts';
import type { RunRow } from './runs.ts';

/** One event of the stream: content-free, as GET /v1/journey-events lists it, with progress always present. */
export interface RunEvent {
  id: string;
  kind: string;
  run_id: string;
  state: RunStatus;
  progress: RunProgress;
  created_at: string;
}

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
  signal: AbortSignal;
}

export const DEFAULT_FOLLOW = { pollMs: 250, maxPollMs: 1_000, terminalGraceMs: 1_000, maxFailures: 5 } as const;

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
  let run = first;
  let cursor = after;
  let wait = options.pollMs;
  let failures = 0;
  while (!signal.aborted) {
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
    if (page.rows.length > 0) {
      wait = options.pollMs;
    } else {
      if (isTerminal(run.status) && Date.now() - run.updatedAt.getTime() >= options.terminalGraceMs) {
        yield runEndEvent(run);
        return;
      }
      wait = Math.min(wait * 2, options.maxPollMs);
    }
    await sleep(wait, signal);
  }
}
