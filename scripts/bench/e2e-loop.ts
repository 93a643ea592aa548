// Row 11's closed loop, the same on both sides: `concurrency` callers, each starting a run and
// awaiting its end, then the next, for a warm-up and a measured window. Only runs that end inside the
// window count (runs/s = those / window). At the window's end no caller starts another run, and the
// runs still going are awaited (not counted), so the next phase starts on an idle service.
import { summarize, type LoadResult } from './report.ts';

export interface LoopArgs {
  concurrency: number;
  warmupSeconds: number;
  seconds: number;
}

/** A run not ended by then counts as failed (loop) or fails the count: a stuck run never hangs the bench. */
const RUN_DEADLINE_MS = 120_000;

/** `run`, or a rejection once RUN_DEADLINE_MS have passed. */
export function withinDeadline<T>(run: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the run did not end within ${RUN_DEADLINE_MS / 1000} s`)), RUN_DEADLINE_MS);
  });
  return Promise.race([run, late]).finally(() => clearTimeout(timer));
}

/** One run from start to its end; resolves true when it ended as it should. */
export type OneRun = () => Promise<boolean>;

/** The window's figures, and for the whole phase (warm-up and drain too): the runs ended and this process's CPU. */
export type LoopResult = LoadResult & { runs: number; cpu_ms: number };

export async function closedLoop(a: LoopArgs, one: OneRun): Promise<LoopResult> {
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const from = t0 + a.warmupSeconds * 1000;
  const to = from + a.seconds * 1000;
  const latencies: number[] = [];
  let failed = 0;
  let runs = 0;
  const caller = async () => {
    while (performance.now() < to) {
      const started = performance.now();
      const ok = await withinDeadline(one()).catch(() => false);
      const ended = performance.now();
      runs++;
      // A run counts in the window it ends in; those that end after it are drained, not counted.
      if (ended < from || ended >= to) continue;
      if (ok) latencies.push(ended - started);
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: a.concurrency }, caller));
  const used = process.cpuUsage(cpu);
  return { ...summarize(latencies, a.seconds, failed), runs, cpu_ms: Math.round((used.user + used.system) / 1000) };
}
