// Faults on a seeded schedule, with real processes and real signals: kill -9 and
// SIGTERM of workers and API replicas (at random, and at the approval transition),
// Postgres stopped and started, Temporal stopped and started. Each is recorded with
// when it began and how long the outage lasted.
import pg from 'pg';
import { type Cluster, sleep } from './cluster.ts';
import { between, type Rng, shuffled } from './rng.ts';

export const FAULT_KINDS = ['worker-kill9', 'worker-term', 'api-kill9', 'api-term', 'workers-kill9-at-approval', 'postgres-stop', 'temporal-stop'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRecord {
  kind: FaultKind;
  target: string;
  startedAt: number;
  /** How long the target was away (ms). */
  downMs: number;
  /** Postgres or Temporal: a dependency outage, whose error-level log lines the drill counts. */
  outage: boolean;
}

export interface FaultPlan {
  count: number;
  /** Time between the end of one fault and the start of the next. */
  gapMs: [number, number];
  /** How long Postgres or Temporal stays down. */
  outageMs: [number, number];
}

/** The kinds, in the seed's order: each kind once (as far as `count` allows), then at random. */
export function faultSchedule(rng: Rng, count: number): FaultKind[] {
  const first = shuffled(rng, [...FAULT_KINDS]);
  return Array.from({ length: count }, (_, i) => first[i] ?? FAULT_KINDS[Math.floor(rng() * FAULT_KINDS.length)]!);
}

const pick = <T>(rng: Rng, items: T[]) => items[Math.floor(rng() * items.length)]!;

/** Runs the schedule until it is done or `stop()` says so; returns what happened. */
export async function injectFaults(cluster: Cluster, rng: Rng, plan: FaultPlan, schedule: FaultKind[], stop: () => boolean): Promise<FaultRecord[]> {
  const done: FaultRecord[] = [];
  for (const kind of schedule) {
    await sleep(between(rng, ...plan.gapMs));
    if (stop()) break;
    const fault = await inject(cluster, rng, plan, kind);
    done.push(fault);
    console.log(`drill: fault ${done.length}/${schedule.length} ${fault.kind} (${fault.target}), ${(fault.downMs / 1000).toFixed(1)} s`);
  }
  return done;
}

async function inject(cluster: Cluster, rng: Rng, plan: FaultPlan, kind: FaultKind): Promise<FaultRecord> {
  const startedAt = Date.now();
  const names = (k: 'api' | 'worker') => [...cluster.services.values()].filter((s) => s.kind === k).map((s) => s.name);
  const record = (target: string, outage = false): FaultRecord => ({ kind, target, startedAt, downMs: Date.now() - startedAt, outage });
  switch (kind) {
    case 'worker-kill9':
    case 'worker-term': {
      const target = pick(rng, names('worker'));
      await cluster.restart(target, kind === 'worker-kill9' ? 'SIGKILL' : 'SIGTERM', between(rng, 200, 2_000));
      return record(target);
    }
    case 'api-kill9':
    case 'api-term': {
      const target = pick(rng, names('api'));
      await cluster.restart(target, kind === 'api-kill9' ? 'SIGKILL' : 'SIGTERM', between(rng, 200, 2_000));
      return record(target);
    }
    case 'workers-kill9-at-approval': {
      // Every worker at once, the moment a run's record moves to awaiting_approval: whichever worker
      // moved it dies before its workflow task completes, as in the false-409 report.
      await untilApprovalTransition(cluster.postgres.url, 20_000);
      await Promise.all(names('worker').map((w) => cluster.restart(w, 'SIGKILL', 500)));
      return record('all workers');
    }
    case 'postgres-stop': {
      cluster.postgres.stop();
      await sleep(between(rng, ...plan.outageMs));
      cluster.postgres.start();
      return record('postgres', true);
    }
    case 'temporal-stop': {
      await cluster.stopTemporal();
      await sleep(between(rng, ...plan.outageMs));
      await cluster.startTemporal();
      return record('temporal', true);
    }
  }
}

/** Returns as soon as a run's record moved to awaiting_approval (within the last half second), or after `timeoutMs`. */
async function untilApprovalTransition(databaseUrl: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const { rows } = await client.query(`select 1 from runs where status = 'awaiting_approval' and updated_at > now() - interval '500 milliseconds' limit 1`);
      if (rows.length > 0) return;
      await sleep(25);
    }
  } finally {
    await client.end();
  }
}
