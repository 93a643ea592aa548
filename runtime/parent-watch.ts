// `npm start` runs the service under npm. If npm dies without passing a signal
// on (kill -9 of npm), this process is re-parented and would keep the ports,
// the embedded database and the dev server for good. It watches its parent and,
// once that is gone, stops itself exactly as a SIGTERM would.
export function stopWhenParentDies(intervalMs = 1_000): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, intervalMs);
  timer.unref();
}
