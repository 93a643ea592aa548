// The activities of row 11's anchor workflow (scripts/bench/e2e-workflow.ts): plain `pg` writes to
// scratch tables in the bench's database, one transaction per statement as the service's are
// (autocommit), with the service's pool size. Nothing else: no reads, no payloads to speak of.
import type pg from 'pg';

/** The scratch tables: a run row (updated at each move, as the service's runs row), its events, its ledger entries. */
export const SCRATCH_TABLES = `
  create table if not exists bench_e2e_runs (id text primary key, seq int not null default 0, updated_at timestamptz not null default now());
  create table if not exists bench_e2e_events (id bigserial primary key, run_id text not null, seq int not null, created_at timestamptz not null default now());
  create table if not exists bench_e2e_ledger (id bigserial primary key, run_id text not null, amount bigint not null, created_at timestamptz not null default now());`;

/** The run's row, written before its workflow starts (as the API commits a run's row before starting it). */
export async function insertRun(pool: pg.Pool, runId: string): Promise<void> {
  await pool.query('insert into bench_e2e_runs (id) values ($1)', [runId]);
}

export function anchorActivities(pool: pg.Pool) {
  return {
    /** A state change: the run's row and one event, two write transactions (activities/projection.ts writes these two). */
    async recordMove(runId: string, seq: number): Promise<void> {
      await pool.query('update bench_e2e_runs set seq = $2, updated_at = now() where id = $1', [runId, seq]);
      await pool.query('insert into bench_e2e_events (run_id, seq) values ($1, $2)', [runId, seq]);
    },
    /**
     * An activity's own work: `writes` ledger entries, one transaction each (a hold, a charge), or nothing.
     * Its input may carry padding, and its result is `resultBytes` long (the `payloads` variant).
     */
    async work(runId: string, writes: number, _padding = '', resultBytes = 0): Promise<string> {
      for (let i = 0; i < writes; i++) await pool.query('insert into bench_e2e_ledger (run_id, amount) values ($1, 1)', [runId]);
      return 'x'.repeat(resultBytes);
    },
  };
}

export type AnchorActivities = ReturnType<typeof anchorActivities>;
