// Row 11's per-run counts, on either side: a few runs one after another on an otherwise idle bench,
// then, per run, what its Temporal history holds (activities, local activities, workflow tasks,
// search-attribute upserts, events) and how many write transactions it committed to Postgres. Those
// are counted server-wide (the bench's Postgres serves nothing else meanwhile) from the transaction
// id counter, which moves only for a transaction that writes, and at once (pg_stat_database's
// counters reach it up to seconds late, and count the reads too): around each run, and the median
// taken, since the idle bench writes now and then too (instance leases, autovacuum's analyze, the
// reconcile schedule). A write that lands after the run's end was seen is counted with the next run.
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { withinDeadline } from './e2e-loop.ts';
import { median } from './report.ts';

export interface RunCounts {
  runs: number;
  /** Per run, averaged. */
  activities: number;
  localActivities: number;
  workflowTasks: number;
  /** Patch markers (patched()), recorded by the SDK as markers too. */
  patchMarkers: number;
  upserts: number;
  events: number;
  writeTransactions: number;
  /** Journey events (one per state change) and the statuses passed, on the service side. */
  transitions?: number;
  statuses?: string[];
}

export interface CountArgs {
  databaseUrl: string;
  temporalAddress: string;
  runs: number;
}

/** The next transaction id, read without taking one. */
async function nextXid(db: pg.Client): Promise<number> {
  const { rows } = await db.query<{ xid: string }>('select pg_snapshot_xmax(pg_current_snapshot())::text as xid');
  return Number(rows[0]!.xid);
}

/** Events of one workflow's history by kind: the name of the attributes each event carries. */
async function historyKinds(client: Client, workflowId: string): Promise<Map<string, number>> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const kinds = new Map<string, number>();
  for (const event of history.events ?? []) {
    const attrs = Object.keys(event).find((k) => k.endsWith('EventAttributes') && (event as Record<string, unknown>)[k]);
    let kind = attrs?.replace(/EventAttributes$/, '') ?? 'unknown';
    if (kind === 'markerRecorded') kind = `marker:${event.markerRecordedEventAttributes?.markerName}`;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return kinds;
}

/**
 * Runs `runs` runs one after another with `one` (which answers the workflow id of a run it awaited
 * to its end) and counts per run. `transitions` reads the service's journey for the run ids.
 */
export async function countRuns(
  a: CountArgs,
  one: () => Promise<string>,
  transitions?: (db: pg.Client, ids: string[]) => Promise<{ transitions: number; statuses: string[] }>,
): Promise<RunCounts> {
  const db = new pg.Client({ connectionString: a.databaseUrl });
  await db.connect();
  const ids: string[] = [];
  const writes: number[] = [];
  for (let i = 0; i < a.runs; i++) {
    const before = await nextXid(db);
    ids.push(await withinDeadline(one()));
    writes.push((await nextXid(db)) - before);
  }
  const connection = await Connection.connect({ address: a.temporalAddress });
  const client = new Client({ connection });
  const totals = new Map<string, number>();
  for (const id of ids) for (const [k, n] of await historyKinds(client, id)) totals.set(k, (totals.get(k) ?? 0) + n);
  await connection.close();
  const per = (k: string) => (totals.get(k) ?? 0) / a.runs;
  const journey = transitions ? await transitions(db, ids) : undefined;
  await db.end();
  const r1 = (x: number) => Math.round(x * 10) / 10;
  return {
    runs: a.runs,
    activities: per('activityTaskScheduled'),
    localActivities: per('marker:core_local_activity'),
    workflowTasks: per('workflowTaskCompleted'),
    patchMarkers: per('marker:core_patch'),
    upserts: per('upsertWorkflowSearchAttributes'),
    events: r1([...totals.values()].reduce((s, n) => s + n, 0) / a.runs),
    writeTransactions: median(writes),
    ...(journey ? { transitions: r1(journey.transitions / a.runs), statuses: journey.statuses } : {}),
  };
}
