// PGlite is a single-process database: two processes opening ./data at once
// would corrupt it. A pid file marks the owner; a stale one (dead pid) is taken over.
// The owner also writes there where it serves the database to the admin CLIs
// (runtime/admin-access.ts): lines "<pid>", "<purpose>", and optionally "socket <path>".
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface DataDirHolder {
  pid: number;
  purpose: string;
  /** The Unix socket where it serves the database, when it does. */
  socket?: string;
}

export interface DataDirLock {
  release(): void;
  /** Records (or, with undefined, withdraws) the socket this process serves the database on. */
  advertise(socket: string | undefined): void;
  /** What a dead previous holder had recorded, for cleaning up after it. */
  stale?: DataDirHolder;
}

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: DataDirHolder,
  ) {
    super(
      `The embedded database in ${dataDir} is in use by process ${holder.pid} (${holder.purpose}). Stop it first (Ctrl-C in its terminal), or set DATABASE_URL to use Postgres.`,
    );
  }
}

const lockFile = (dataDir: string) => path.join(dataDir, 'service.pid');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !zombie(pid);
}

/**
 * A process killed with -9 whose parent died too stays a zombie until an init reaps it, and some
 * (a container's) never do: it holds no file and runs nothing, so its lock is stale.
 */
function zombie(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false; // no /proc (macOS): kill(pid, 0) decides
  }
}

function readLockFile(dataDir: string): DataDirHolder | undefined {
  let text: string;
  try {
    text = readFileSync(lockFile(dataDir), 'utf8');
  } catch {
    return undefined;
  }
  const [pidLine = '', purpose = 'unknown', ...rest] = text.split('\n');
  const pid = Number(pidLine);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const socket = rest.find((l) => l.startsWith('socket '))?.slice('socket '.length);
  return { pid, purpose, ...(socket ? { socket } : {}) };
}

/** The live process holding the lock (another than this one), if any. */
export function dataDirHolder(dataDir: string): DataDirHolder | undefined {
  const holder = readLockFile(dataDir);
  return holder && holder.pid !== process.pid && alive(holder.pid) ? holder : undefined;
}

function format(holder: DataDirHolder): string {
  return `${holder.pid}\n${holder.purpose}\n${holder.socket ? `socket ${holder.socket}\n` : ''}`;
}

/** Takes the lock or throws DataDirInUseError naming the process that holds it. Creates `dataDir`. */
export function lockDataDir(dataDir: string, purpose: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const file = lockFile(dataDir);
  const mine: DataDirHolder = { pid: process.pid, purpose };
  let stale: DataDirHolder | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      // 'wx': of two processes starting at once, one creates the file and the other sees it.
      writeFileSync(file, format(mine), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
    }
    const holder = dataDirHolder(dataDir);
    if (holder) throw new DataDirInUseError(dataDir, holder);
    stale ??= readLockFile(dataDir);
    rmSync(file, { force: true });
  }
  return {
    release: () => {
      if (readLockFile(dataDir)?.pid === process.pid) rmSync(file, { force: true });
    },
    advertise: (socket) => {
      // Written aside and renamed, so a reader never sees half a file.
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, format({ ...mine, ...(socket ? { socket } : {}) }));
      renameSync(tmp, file);
    },
    ...(stale && stale.pid !== process.pid ? { stale } : {}),
  };
}
