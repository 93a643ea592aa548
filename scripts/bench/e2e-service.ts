// Row 11's service side: analysis runs created with POST /v1/agent-runs over HTTP, each awaited until
// the run's row says it ended. The ends are read from Postgres by one poller, one statement every
// 100 ms for all the runs in flight (not a request per run): waiting adds 10 small reads a second,
// against the tens of writes a second the runs make, and at most 100 ms to a run that takes seconds.
//   node --import tsx scripts/bench/e2e-service.ts loop|counts '<json>'   (prints a LoadResult, or RunCounts)
import pg from 'pg';
import { type CountArgs, countRuns } from './e2e-counts.ts';
import { closedLoop, type LoopArgs } from './e2e-loop.ts';

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

const TICK_MS = 100;
const TERMINAL = ['completed', 'failed', 'needs_attention'];

/** Resolves each awaited run with its final status, polling the runs table every TICK_MS while any is awaited. */
class EndWatcher {
  private readonly waiting = new Map<string, (status: string) => void>();
  private readonly client: pg.Client;
  private timer: NodeJS.Timeout | undefined;

  constructor(databaseUrl: string) {
    this.client = new pg.Client({ connectionString: databaseUrl });
  }

  async open(): Promise<void> {
    await this.client.connect();
    this.timer = setInterval(() => void this.tick(), TICK_MS);
  }

  ended(runId: string): Promise<string> {
    return new Promise((resolve) => this.waiting.set(runId, resolve));
  }

  private polling = false;
  private async tick(): Promise<void> {
    if (this.polling || this.waiting.size === 0) return;
    this.polling = true;
    try {
      const { rows } = await this.client.query<{ id: string; status: string }>(
        'select id, status from runs where id = any($1::text[]) and status = any($2::text[])',
        [[...this.waiting.keys()], TERMINAL],
      );
      for (const r of rows) {
        this.waiting.get(r.id)?.(r.status);
        this.waiting.delete(r.id);
      }
    } finally {
      this.polling = false;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.client.end();
  }
}

/** POSTs one run (no Idempotency-Key: a new run each time) and answers its id. */
async function createRun(a: ServiceRunArgs): Promise<string> {
  const res = await fetch(`${a.apiUrl}/v1/agent-runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input: a.input }),
  });
  const body = (await res.json()) as { run_id?: string };
  if (res.status !== 201 || !body.run_id) throw new Error(`POST /v1/agent-runs answered ${res.status}`);
  return body.run_id;
}

/** One analysis run from POST to its end: true when it ended as it should (`endStatus`). */
const serviceRun = (a: ServiceRunArgs, watcher: EndWatcher) => async (): Promise<boolean> => (await watcher.ended(await createRun(a))) === a.endStatus;

/** The run's journey: events (one per state change) per run, and the first run's statuses in order. */
async function journeyOf(db: pg.Client, ids: string[]): Promise<{ transitions: number; statuses: string[] }> {
  const { rows } = await db.query<{ n: number }>('select count(*)::int as n from journey_events where run_id = any($1::text[])', [ids]);
  const first = await db.query<{ state: string }>('select state from journey_events where run_id = $1 order by id', [ids[0]]);
  const statuses = first.rows.map((r) => r.state).filter((x, i, xs) => x !== xs[i - 1]);
  return { transitions: rows[0]!.n, statuses };
}

const mode = process.argv[2];
const a = JSON.parse(process.argv[3]!) as ServiceLoopArgs & CountArgs;
const watcher = new EndWatcher(a.databaseUrl);
await watcher.open();
const result =
  mode === 'counts'
    ? await countRuns(
        a,
        async () => {
          const id = await createRun(a);
          await watcher.ended(id);
          return id;
        },
        journeyOf,
      )
    : await closedLoop(a, serviceRun(a, watcher));
await watcher.close();
console.log(JSON.stringify(result));
process.exit(0);
