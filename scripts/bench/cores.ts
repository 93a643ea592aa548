// Which CPUs each party of the bench runs on. With BENCH_PIN=1, two or more CPUs and `taskset`
// (util-linux), the server under test (the API, `npm start`, an anchor server, the raw-start client of row 1) runs on
// the last CPU alone, and everything else (this script, the load generator, Postgres, Temporal, the
// trace receiver) on the others: the two sides of a comparison then run on the same core, which
// nothing else takes from them, instead of wherever the scheduler puts them beside the load
// generator and the database. The model's rows (6, 8) run on every CPU, as users run them.
// Off by default: it steadies one process's `/health` rounds, but it also confines the server's GC
// and libuv threads to its one core and Temporal and Postgres to the other, and in a full run on a
// noisy machine it spread the pairs no less (a bench run of 2026-11-27, in git history).
import { execFileSync } from 'node:child_process';
import os from 'node:os';

const cpus = os.availableParallelism();

/** Whether `taskset` runs here; asked only when pinning is asked for. */
function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether parties are pinned: BENCH_PIN=1, two CPUs or more, and taskset on PATH. */
export const pinned = process.env.BENCH_PIN === '1' && cpus >= 2 && hasTaskset();

const last = String(cpus - 1);
const others = cpus === 2 ? '0' : `0-${cpus - 2}`;
const every = `0-${cpus - 1}`;

/** Where a child runs: the core of the server under test, or every CPU. */
export type Cores = 'under-test' | 'all';

/** What the bench says about its pinning, for the log and the report. */
export const pinningNote = pinned ? `server under test on CPU ${last}, everything else on CPU ${others}` : 'not pinned';

/**
 * Moves this process (every thread) to the CPUs of everything else; children started from now on
 * inherit it unless `spawnArgs` says otherwise. Call before starting Postgres or Temporal.
 */
export function pinSelf(): void {
  if (pinned) execFileSync('taskset', ['-apc', others, String(process.pid)], { stdio: 'ignore' });
}

/** The command and arguments that run `command args` on `cores`. */
export function spawnArgs(cores: Cores, command: string, args: string[]): [string, string[]] {
  if (!pinned) return [command, args];
  return ['taskset', ['-c', cores === 'under-test' ? last : every, command, ...args]];
}
