// The production entry points stop cleanly on SIGTERM and SIGINT: the API
// (bin/api.ts) and the worker (bin/worker.ts) drain and exit 0, also as PID 1
// of their own PID namespace, as a container runs them (node as PID 1 gets no
// default signal handling: only the handlers the service installs stop it).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { freePort } from './support/free-port.ts';
import { payloadEnv } from './support/payload-codec.ts';

function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    ...payloadEnv(),
    DATABASE_URL: inject('databaseUrl'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
    TASK_QUEUE: `signals-${process.pid}`,
    ...extra,
  };
}

/** Starts `entry`, as PID 1 of a new PID namespace when `asPid1`; resolves once its log says it is up. */
async function start(entry: 'api' | 'worker', asPid1: boolean): Promise<{ child: ChildProcess; log: () => string; target: () => number }> {
  const port = String(await freePort());
  const command = [process.execPath, '--import', 'tsx', `bin/${entry}.ts`];
  const child = asPid1
    ? spawn('unshare', ['--pid', '--fork', '--mount-proc', ...command], { env: env({ PORT: port }), stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(command[0]!, command.slice(1), { env: env({ PORT: port }), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const ready = entry === 'api' ? /api listening/ : /worker running/;
  const deadline = Date.now() + 60_000;
  while (!ready.test(out)) {
    if (child.exitCode !== null) throw new Error(`${entry} exited early:\n${out}`);
    if (Date.now() > deadline) throw new Error(`${entry} did not come up:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // As PID 1 the signal goes to node inside the namespace: unshare's only child.
  const target = () => (asPid1 ? Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]) : child.pid!);
  return { child, log: () => out, target };
}

const exitOf = (child: ChildProcess) =>
  child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

describe('production entry points and signals', () => {
  it.each([
    ['api', 'SIGTERM', false],
    ['api', 'SIGINT', false],
    ['worker', 'SIGTERM', false],
    ['api', 'SIGTERM', true],
    ['worker', 'SIGTERM', true],
  ] as const)('%s stops cleanly on %s (as PID 1: %s) and exits 0', { timeout: 90_000 }, async (entry, signal, asPid1) => {
    const { child, log, target } = await start(entry, asPid1);
    try {
      process.kill(target(), signal);
      expect(await exitOf(child)).toBe(0);
      expect(log()).toContain('shutting down');
      expect(log()).not.toContain('shutdown step failed');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
