// A Postgres server the test owns (initdb in a temp dir, its own port), so a
// test can stop and start it without touching the server the suite shares.
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.ts';

function binDir(): string {
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b));
    return `/usr/lib/postgresql/${versions.at(-1)}/bin`;
  }
}

export interface PrivatePostgres {
  url: string;
  stop(): void;
  start(): void;
  /** Whether its server process is running (pg_ctl status). */
  running(): boolean;
  destroy(): void;
}

/** Under `parent` (default the system temp dir): its own cluster, on a free port; `settings` are more `-c` options (the bench's). */
export async function startPrivatePostgres(parent = os.tmpdir(), settings: string[] = []): Promise<PrivatePostgres> {
  const bin = binDir();
  const dir = mkdtempSync(path.join(parent, 'gws-pg-'));
  const data = path.join(dir, 'data');
  const port = await freePort();
  // Postgres refuses to run as root; as root (CI), run it as the postgres user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { uid, gid } = {
      uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
      gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
    };
    chownSync(dir, uid, gid);
  }
  const run = (tool: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args], { stdio: 'ignore' })
      : execFileSync(path.join(bin, tool), args, { stdio: 'ignore' });
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const start = () =>
    run('pg_ctl', [
      '-D',
      data,
      '-w',
      '-o',
      [`-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, ...settings.map((x) => `-c ${x}`)].join(' '),
      'start',
    ]);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => run('pg_ctl', ['-D', data, '-w', '-m', 'fast', 'stop']),
    start,
    running() {
      try {
        run('pg_ctl', ['-D', data, 'status']);
        return true;
      } catch {
        return false; // exit 3: no server running
      }
    },
    destroy() {
      try {
        run('pg_ctl', ['-D', data, '-w', '-m', 'immediate', 'stop']);
      } catch {} // already stopped
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
