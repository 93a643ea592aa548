// The fault drill as CI runs it (`npm run drill -- --quick`): real processes, real
// signals, a seeded schedule; it must end with no violation. And an interrupted drill
// leaves no process behind.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, inject, it } from 'vitest';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

function drill(args: string[]): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/drill.ts', ...args], {
    env: { ...process.env, TEMPORAL_CLI: inject('temporalCli') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (output += d));
  return { child, output: () => output, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
}

/** Processes whose command line or environment names `dir`: what a drill started there. */
function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const text = readFileSync(`/proc/${entry}/cmdline`, 'latin1') + readFileSync(`/proc/${entry}/environ`, 'latin1');
      if (text.includes(dir)) found.push(Number(entry));
    } catch {} // gone meanwhile, or not ours to read
  }
  return found;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

describe('npm run drill -- --quick', () => {
  it('survives every kind of fault with no violation: at least 20 runs and 3 faults', { timeout: 280_000 }, async () => {
    const run = drill(['--quick', '--seed', process.env.DRILL_SEED ?? '20261125']);
    const code = await run.exited;
    const lines = run.output().trim().split('\n');
    const summary = JSON.parse(lines.at(-1)!);
    expect(summary.violations, run.output()).toBe(0);
    expect(code).toBe(0);
    expect(summary.runs).toBeGreaterThanOrEqual(20);
    expect(summary.faults).toBeGreaterThanOrEqual(3);
    expect(summary.false_409).toBe(0);
    expect(Object.keys(summary.fault_kinds).sort()).toEqual([
      'api-kill9',
      'api-term',
      'postgres-stop',
      'temporal-stop',
      'worker-kill9',
      'worker-term',
      'workers-kill9-at-approval',
    ]);
  });

  it('interrupted with SIGINT, it stops everything it started', { timeout: 120_000 }, async () => {
    const run = drill(['--quick']);
    expect(await until(() => /drill: cluster up in (\S+)/.test(run.output()), 90_000), run.output()).toBe(true);
    const scratch = /drill: cluster up in (\S+)/.exec(run.output())![1]!;
    expect(processesIn(scratch).length).toBeGreaterThanOrEqual(5); // Postgres, Temporal, 2 APIs, 2 workers
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(130);
    expect(await until(() => processesIn(scratch).length === 0, 15_000), `left: ${processesIn(scratch).join(', ')}`).toBe(true);
    expect(existsSync(scratch)).toBe(false);
  });
});
