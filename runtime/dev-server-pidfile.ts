// The Temporal dev server that `npm start` started, remembered in DATA_DIR so a
// later `npm start` can recognise it. After a kill -9 of `npm start` nothing
// stops the server (it runs in its own process group, so Ctrl-C does not kill
// it before the worker drains), and it keeps the port: the next start finds
// the pid file, checks that the process is still that very server (its start
// time, read from /proc, and its command line), and stops it. A server this
// file does not describe is never touched.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Logger } from 'pino';

interface Recorded {
  pid: number;
  port: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot): with the pid, it names one process for ever. */
  startTime: string;
}

/** A process's start time, or null where /proc cannot tell (not Linux, or the process is gone). */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** Records the server just started. */
export function recordDevServer(file: string, pid: number, port: number): void {
  const startTime = startTimeOf(pid);
  if (startTime === null) return; // nothing could later prove it is the same process: record nothing
  writeFileSync(file, JSON.stringify({ pid, port, startTime } satisfies Recorded));
}

export function forgetDevServer(file: string): void {
  rmSync(file, { force: true });
}

/** Whether `pid` still runs (a zombie, dead but not yet reaped by its new parent, does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Stops the dev server a previous `npm start` recorded in `file`, if that very process still runs
 * (SIGTERM, then SIGKILL after `graceMs`), and removes the file. Returns whether it stopped one.
 */
export async function stopRecordedDevServer(file: string, logger: Logger, graceMs = 10_000): Promise<boolean> {
  if (!existsSync(file)) return false;
  let recorded: Recorded;
  try {
    recorded = JSON.parse(readFileSync(file, 'utf8')) as Recorded;
  } catch {
    forgetDevServer(file);
    return false;
  }
  const same = startTimeOf(recorded.pid) === recorded.startTime && / server start-dev /.test(` ${commandLineOf(recorded.pid)} `);
  if (!same) {
    forgetDevServer(file); // gone, or its pid now belongs to another process
    return false;
  }
  logger.warn({ pid: recorded.pid, port: recorded.port }, 'stopping the Temporal dev server a previous npm start left running');
  process.kill(recorded.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive(recorded.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (alive(recorded.pid)) process.kill(recorded.pid, 'SIGKILL');
  while (alive(recorded.pid)) await new Promise((r) => setTimeout(r, 50));
  forgetDevServer(file);
  return true;
}
