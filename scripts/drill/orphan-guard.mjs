// Preloaded into every service the drill starts (node --import): a service whose drill
// died without stopping it (kill -9 of the drill) stops itself, as a SIGTERM would.
// Plain JavaScript, because worker threads inherit --import before TypeScript loads;
// the same check as runtime/parent-watch.ts, in the main thread only.
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
  }, 1_000).unref();
}
