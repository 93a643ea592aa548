// Runs the README's `npm start` as a person would (its own process group, as a
// terminal gives it, so Ctrl-C signals the whole group) and waits for its banner.
import { type ChildProcess, spawn } from 'node:child_process';

export interface Started {
  child: ChildProcess;
  output: () => string;
}

/** Starts `npm start` with `env` and records its process group in `groups` (for cleanup); does not wait for anything. */
export function spawnNpmStart(env: NodeJS.ProcessEnv, groups: number[]): Started {
  const child = spawn('npm', ['start'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  groups.push(child.pid!);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return { child, output: () => out };
}

/** Starts `npm start` with `env`, records its process group in `groups` (for cleanup), and resolves once it is up. */
export async function startNpmStart(env: NodeJS.ProcessEnv, groups: number[], timeoutMs = 150_000): Promise<Started> {
  const started = spawnNpmStart(env, groups);
  const deadline = Date.now() + timeoutMs;
  while (!started.output().includes('Press Ctrl-C to stop.')) {
    if (started.child.exitCode !== null) throw new Error(`npm start exited early:\n${started.output()}`);
    if (Date.now() > deadline) throw new Error(`npm start did not come up:\n${started.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return started;
}
