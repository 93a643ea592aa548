// Row 11's service side: analysis runs created with POST /v1/agent-runs over HTTP, each awaited until
// the run's row says it ended (scripts/bench/run-watcher.ts: one poller for all the runs in flight).
//   node --import tsx scripts/bench/e2e-service.ts loop|counts '<json>'   (prints a LoadResult, or RunCounts)
import type pg from 'pg';
import { type CountArgs, countRuns } from './e2e-counts.ts';
import { closedLoop, type LoopArgs } from './e2e-loop.ts';
import { createRun, RunWatcher } from './run-watcher.ts';

export interface ServiceRunArgs {
  apiUrl: string;
  secret: string;
  databaseUrl: string;
  input: string;
  /**
   * The status a run of `input` should end in. On the local provider an analysis run ends
   * needs_attention: the local planner prepares analysis but never performs it, so its receipt lists
   * the action unresolved (domain/planning/local-planner.ts); its path is the one a completed run takes.
   */
  endStatus: string;
}
export type ServiceLoopArgs = ServiceRunArgs & LoopArgs;

const TERMINAL = ['completed', 'failed', 'needs_attention'];

/** One analysis run from POST to its end: true when it ended as it should (`endStatus`). */
const serviceRun = (a: ServiceRunArgs, watcher: RunWatcher) => async (): Promise<boolean> =>
  (await watcher.reached(await createRun(a.apiUrl, a.secret, a.input), TERMINAL)) === a.endStatus;

/** The run's journey: events (one per state change) per run, and the first run's statuses in order. */
async function journeyOf(db: pg.Client, ids: string[]): Promise<{ transitions: number; statuses: string[] }> {
  const { rows } = await db.query<{ n: number }>('select count(*)::int as n from journey_events where run_id = any($1::text[])', [ids]);
  const first = await db.query<{ state: string }>('select state from journey_events where run_id = $1 order by id', [ids[0]]);
  const statuses = first.rows.map((r) => r.state).filter((x, i, xs) => x !== xs[i - 1]);
  return { transitions: rows[0]!.n, statuses };
}

const mode = process.argv[2];
const a = JSON.parse(process.argv[3]!) as ServiceLoopArgs & CountArgs;
const watcher = new RunWatcher(a.databaseUrl);
await watcher.open();
const result =
  mode === 'counts'
    ? await countRuns(
        a,
        async () => {
          const id = await createRun(a.apiUrl, a.secret, a.input);
          await watcher.reached(id, TERMINAL);
          return id;
        },
        journeyOf,
      )
    : await closedLoop(a, serviceRun(a, watcher));
await watcher.close();
console.log(JSON.stringify(result));
process.exit(0);
