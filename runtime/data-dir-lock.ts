// PGlite is a single-process database: two processes opening ./data at once
// would corrupt it. A pid file marks the owner; a stale one (dead pid) is taken over.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock or throws naming the process that holds it; returns the release function. */
export function lockDataDir(dataDir: string, purpose: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'service.pid');
  let holder: number | undefined;
  try {
    holder = Number(readFileSync(file, 'utf8').split('\n')[0]);
  } catch {
    holder = undefined;
  }
  if (holder && holder !== process.pid && alive(holder)) {
    throw new Error(
      `The embedded database in ${dataDir} is in use by process ${holder}. Stop it first (Ctrl-C in its terminal), or set DATABASE_URL to use Postgres.`,
    );
  }
  writeFileSync(file, `${process.pid}\n${purpose}\n`);
  return () => rmSync(file, { force: true });
}
