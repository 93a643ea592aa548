// The bench's own Postgres: a private cluster in a temporary directory, on a port of its own, with
// settings for measuring rather than for keeping data (no fsync, asynchronous commit, no full-page
// writes). The API and its pg anchor then share a server that nothing else uses, whose writes do not
// wait on the disk, so a repetition's ratio depends less on what the machine's shared server is doing.
// Used when `initdb` and `pg_ctl` are on PATH and BENCH_DATABASE_URL is not set; otherwise the bench
// keeps to BENCH_DATABASE_URL / TEST_DATABASE_URL as before. As root, the cluster runs as `postgres`.
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../tests/support/free-port.ts';

export interface BenchCluster {
  /** The cluster's maintenance database, as the bench's admin URL. */
  adminUrl: string;
  stop(): void;
}

/** Benchmark settings: durability off (a crash loses the cluster, which is thrown away anyway). */
const SETTINGS = ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'shared_buffers=256MB', 'max_connections=200'];

const onPath = (tool: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Runs a Postgres tool as the cluster's owner: `postgres` when this process is root (initdb refuses root). */
function asOwner(tool: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  execFileSync(asRoot ? 'runuser' : tool, asRoot ? ['-u', 'postgres', '--', tool, ...args] : args, { stdio: 'ignore' });
}

/** Starts the bench's own cluster, or null when it cannot (no initdb/pg_ctl) or should not (BENCH_DATABASE_URL). */
export async function startBenchCluster(): Promise<BenchCluster | null> {
  if (process.env.BENCH_DATABASE_URL || !onPath('initdb') || !onPath('pg_ctl')) return null;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gws-bench-pg-'));
  const data = path.join(dir, 'data');
  if (process.getuid?.() === 0) {
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  const port = await freePort();
  try {
    asOwner('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    const options = [`-p ${port}`, `-k ${dir}`, "-c listen_addresses='127.0.0.1'", ...SETTINGS.map((s) => `-c ${s}`)].join(' ');
    asOwner('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the bench's own Postgres did not start (${(err as Error).message}); set BENCH_DATABASE_URL to use another`);
  }
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        asOwner('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function postgresIds(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}
