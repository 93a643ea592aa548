// The rollout drill's quick form (`npm run drill -- --rollout --quick`): a v2 build incompatible with v1
// histories is deployed while runs wait at approval, execute and settle. With Worker Versioning it ends with
// no violation; the same drill with the workers unversioned must fail for non-determinism, or the drill
// could not tell.
import { spawn } from 'node:child_process';
import { describe, expect, inject, it } from 'vitest';

function drill(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/drill.ts', '--rollout', '--quick', '--seed', '20261126', ...args], {
    env: { ...process.env, TEMPORAL_CLI: inject('temporalCli') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (output += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

// The drill's last line is its JSON summary; when it is not (the drill crashed), the error carries the output.
function summaryOf(output: string) {
  try {
    return JSON.parse(output.trim().split('\n').at(-1)!);
  } catch {
    throw new Error(`the drill printed no summary; its output:\n${output}`);
  }
}

describe('npm run drill -- --rollout --quick', () => {
  it('with versioning: 0 non-determinism, 0 stuck, 0 double effects or charges, holds ended; each run on the build PINNED promises', {
    timeout: 240_000,
  }, async () => {
    const { code, output } = await drill([]);
    const summary = summaryOf(output);
    expect(summary.violations, output).toBe(0);
    expect(code).toBe(0);
    expect(summary.non_determinism_failures).toBe(0);
    expect(summary.stuck_runs).toBe(0);
    expect(summary.double_effects).toBe(0);
    expect(summary.v1_drained).toBe(true);
    // The waiting runs moved to v2 by continue-as-new; the runs mid-flight ended on v1.
    expect(summary.continued_as_new).toBe(3);
    expect(Object.keys(summary.builds.settling)).toHaveLength(1);
    expect(Object.keys(summary.builds.waiting)).toEqual(Object.keys(summary.builds.after));
    expect(Object.keys(summary.builds.waiting)).not.toEqual(Object.keys(summary.builds.settling));
  });

  it('without versioning, the same deploy fails for non-determinism and leaves runs stuck', { timeout: 300_000 }, async () => {
    const { code, output } = await drill(['--no-versioning']);
    const summary = summaryOf(output);
    expect(code, output).toBe(1);
    expect(summary.non_determinism_failures).toBeGreaterThan(0);
    expect(summary.violation_kinds.non_determinism).toBe(1);
    expect(summary.stuck_runs).toBeGreaterThan(0);
  });
});
