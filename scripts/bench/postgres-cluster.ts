// The bench's own Postgres: a private cluster (tests/support/private-postgres.ts) with settings for
// measuring rather than for keeping data (no fsync, asynchronous commit, no full-page writes). The
// API and its pg anchor then share a server that nothing else uses, whose writes do not wait on the
// disk, so a repetition's ratio depends less on what the machine's shared server is doing. Used when
// `initdb` and `pg_ctl` are on PATH and BENCH_DATABASE_URL is not set; otherwise the bench keeps to
// BENCH_DATABASE_URL / TEST_DATABASE_URL as before.
import { execFileSync } from 'node:child_process';
import { startPrivatePostgres } from '../../tests/support/private-postgres.ts';

export interface BenchCluster {
  /** The cluster's maintenance database, as the bench's admin URL. */
  adminUrl: string;
  stop(): void;
}

/** Benchmark settings: durability off (a crash loses the cluster, which is thrown away anyway). */
const SETTINGS = ['synchronous_commit=off', 'full_page_writes=off', 'shared_buffers=256MB', 'max_connections=200'];

const onPath = (tool: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Starts the bench's own cluster, or null when it cannot (no initdb/pg_ctl) or should not (BENCH_DATABASE_URL). */
export async function startBenchCluster(): Promise<BenchCluster | null> {
  if (process.env.BENCH_DATABASE_URL || !onPath('initdb') || !onPath('pg_ctl')) return null;
  const cluster = await startPrivatePostgres(undefined, SETTINGS);
  return { adminUrl: cluster.url, stop: () => cluster.destroy() };
}
