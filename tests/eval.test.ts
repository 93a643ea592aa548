// The quick eval as users run it (`npm run eval -- --quick`): everyday requests of every category
// against npm start's defaults (the embedded model, the filesystem MCP server, gws listen), judged
// from the API. What must always hold: every plan valid and every run with a receipt; the refusals
// honest (never completed, no approval asked); and no fall below the pass rate measured here
// (docs/models.md has the full eval's figures).
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** The pass rate the quick subset holds on this machine's default model, less one case. */
const QUICK_PASS_FLOOR = 0.8;

interface EvalSummary {
  cases: number;
  passed: number;
  pass_rate: number;
  categories: Record<string, { cases: number; passed: number; rate: number }>;
  plan_invalid: number;
  plan_empty: number;
  receipts_missing: number;
  latency_to_approval_ms: { median: number; max: number };
}

function quickEval(): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/eval.ts', '--quick'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('npm run eval -- --quick', () => {
  it('plans validly, gives every run a receipt, refuses honestly, and holds its pass rate on the default model', { timeout: 600_000 }, async () => {
    const { code, output } = await quickEval();
    expect(code, output).toBe(0);
    const last = output.trim().split('\n').at(-1)!;
    const summary = JSON.parse(last) as EvalSummary;
    expect(summary.cases, output).toBeGreaterThanOrEqual(8);
    expect(Object.keys(summary.categories).sort()).toEqual(['analysis', 'mixed', 'refuse', 'send', 'tools']);
    expect(summary.plan_invalid, output).toBe(0);
    expect(summary.plan_empty, output).toBe(0);
    expect(summary.receipts_missing, output).toBe(0);
    expect(summary.categories.refuse!.rate, output).toBe(1);
    expect(summary.pass_rate, output).toBeGreaterThanOrEqual(QUICK_PASS_FLOOR);
  });
});
