// Row 11's CPU accounting: the CPU time (user + system, from /proc) of each party over a phase,
// per run ended in it. On a shared two-core machine a phase's runs/s moves with the neighbours; the
// CPU a run costs each party (our API and worker, or the anchor's client and worker; Temporal;
// Postgres) moves much less, and says where a run's time goes. Linux only; elsewhere it reads 0.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import type { LoopResult } from './e2e-loop.ts';
import { type LoadResult, median } from './report.ts';

/** USER_HZ: /proc counts CPU time in ticks of 1/100 s on every Linux this runs on. */
const TICK_MS = 10;

interface Proc {
  ppid: number;
  ticks: number;
}

/** Every process's parent and CPU ticks so far: its own (utime, stime) and its ended children's (cutime, cstime). */
function processes(): Map<number, Proc> {
  const all = new Map<number, Proc>();
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return all; // no /proc
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command (which may hold spaces), from field 3 (state) on.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      all.set(Number(pid), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
    } catch {
      // gone meanwhile
    }
  }
  return all;
}

/** CPU ms so far of each named process tree (the root and every descendant alive now). */
function cpuMsOf(roots: Record<string, number | undefined>): Record<string, number> {
  const all = processes();
  const children = new Map<number, number[]>();
  for (const [pid, p] of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const tree = (pid: number): number => (all.get(pid)?.ticks ?? 0) + (children.get(pid) ?? []).reduce((s, c) => s + tree(c), 0);
  return Object.fromEntries(Object.entries(roots).map(([name, pid]) => [name, pid === undefined ? 0 : tree(pid) * TICK_MS]));
}

/** The Postgres server's postmaster: the parent of this connection's backend. */
export async function postmasterPid(databaseUrl: string): Promise<number | undefined> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ pid: number }>('select pg_backend_pid() as pid');
    // Read while the backend lives: it exits with the connection.
    return processes().get(rows[0]!.pid)?.ppid;
  } finally {
    await db.end();
  }
}

/** CPU ms per run of each party, one record per phase. */
export type CpuPerRun = Record<string, number>;

/**
 * A phase measured with the CPU of each party: the side's own processes (`own`: API and worker, or the
 * anchor's worker), the driver (which reports its own), Temporal and Postgres; each per run ended.
 */
export async function withCpu(
  own: Record<string, number | undefined>,
  shared: Record<string, number | undefined>,
  phase: () => Promise<LoopResult>,
  into: CpuPerRun[],
): Promise<LoadResult> {
  const parties = { ...own, ...shared };
  const before = cpuMsOf(parties);
  const result = await phase();
  const after = cpuMsOf(parties);
  const per = (ms: number) => Math.round(ms / Math.max(1, result.runs));
  into.push({ ...Object.fromEntries(Object.keys(parties).map((k) => [k, per(after[k]! - before[k]!)])), driver: per(result.cpu_ms) });
  return result;
}

/** The medians over a side's phases, e.g. "api 41 + worker 97 = 138 ms; driver 12, temporal 60, postgres 31". */
export function cpuLine(phases: CpuPerRun[], own: string[]): string {
  const m = (k: string) => median(phases.map((p) => p[k]!));
  const sum = own.reduce((t, k) => t + m(k), 0);
  return `${own.map((k) => `${k} ${m(k)}`).join(' + ')} = ${sum} ms; driver ${m('driver')}, temporal ${m('temporal')}, postgres ${m('postgres')}`;
}
