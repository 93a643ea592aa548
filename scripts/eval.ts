// `npm run eval`: everyday requests against `npm start`'s defaults (the embedded model, the
// filesystem MCP server plugged in as the README shows, `gws listen` receiving deliveries), each
// judged from the API alone (and what arrived). Prints a table, then one JSON line: cases, passed,
// pass_rate, the rate per category, plan_invalid, plan_empty, receipts missing, and the time to
// approval (or to the end, for a run that needs none). scripts/eval/cases.ts lists the cases.
//
//   npm run eval                 every case
//   npm run eval -- --quick      the quick subset (every category; npm test runs it)
//   npm run eval -- --only send  one category
//   npm run eval -- --show       also print each failed run's plan, failure and unresolved items
//   npm run eval -- --provider local   the same against another default provider (the bench's anchor)
//   npm run eval -- --model FILE.gguf  the embedded provider on another GGUF model (EMBEDDED_MODEL_PATH)
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CASES, type Category, type EvalCase } from './eval/cases.ts';
import { expectsApproval, judge, type RunView, type Verdict } from './eval/judge.ts';
import { type EvalService, startEvalService } from './eval/service.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    show: { type: 'boolean', default: false },
    provider: { type: 'string' },
    model: { type: 'string' },
  },
});
const CATEGORIES: Category[] = ['send', 'analysis', 'mixed', 'refuse', 'tools'];
if (values.only && !CATEGORIES.includes(values.only as Category)) throw new Error(`--only takes one of ${CATEGORIES.join(', ')}`);
const cases = CASES.filter((c) => (!values.quick || c.quick) && (!values.only || c.category === values.only));

/** How long a run may take to reach approval or its end, and then its end. */
const RUN_WAIT_MS = 240_000;
const TERMINAL = new Set(['completed', 'failed', 'needs_attention']);

interface Row extends Verdict {
  id: string;
  category: Category;
  status: string;
  /** From creation to awaiting_approval, or to the end when no approval came. */
  toApprovalMs: number;
  /** From creation to leaving planning (what the plan took, with the queue before it). */
  planMs: number;
  failure: string | null;
  receipt: boolean;
}

async function api(s: EvalService, method: string, route: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.base}${route}`, {
    method,
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status >= 400) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Polls the run until `done` says so; returns it and when planning was left. */
async function follow(s: EvalService, runId: string, done: (r: RunView) => boolean, t0: number, times: { planLeft?: number }) {
  const deadline = Date.now() + RUN_WAIT_MS;
  for (;;) {
    const run = (await api(s, 'GET', `/v1/agent-runs/${runId}`)) as unknown as RunView;
    if (times.planLeft === undefined && !['accepted', 'planning'].includes(run.status)) times.planLeft = Date.now() - t0;
    if (done(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${run.status} after ${RUN_WAIT_MS} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const withDir = (c: EvalCase, dir: string) => c.input.replaceAll('DIR', dir);

async function runCase(s: EvalService, c: EvalCase): Promise<Row> {
  if (c.seed) writeFileSync(path.join(s.dir, c.seed.path), c.seed.text);
  const t0 = Date.now();
  const created = await api(s, 'POST', '/v1/agent-runs', { input: withDir(c, s.dir) }, { 'idempotency-key': `eval-${c.id}-${t0}` });
  const runId = created.run_id as string;
  const times: { planLeft?: number } = {};
  let run = await follow(s, runId, (r) => r.status === 'awaiting_approval' || TERMINAL.has(r.status), t0, times);
  const toApprovalMs = Date.now() - t0;
  const asked = run.approval?.effects ?? [];
  if (run.status === 'awaiting_approval') {
    // Approved when the case expects an effect; otherwise rejected, as a careful person would.
    const decision = expectsApproval(c) ? 'approve' : 'reject';
    await api(s, 'POST', `/v1/agent-runs/${runId}/approval`, { decision, reason: 'eval' });
    run = await follow(s, runId, (r) => TERMINAL.has(r.status), t0, times);
  }
  let fileText: string | null = null;
  if (c.file) {
    try {
      fileText = readFileSync(path.join(s.dir, c.file.path), 'utf8');
    } catch {} // not written
  }
  const deliveries = s.deliveries.filter((d) => d.body?.run_id === runId);
  const verdict = judge(c, { run, asked, deliveries, fileText }, s.dir);
  if (values.show && !verdict.passed) {
    const { plan, failure, receipt, result } = run as RunView & { plan: Record<string, unknown> | null };
    console.log(JSON.stringify({ case: c.id, plan, failure, unresolved: receipt?.unresolved, answer: result?.answer }, null, 1));
  }
  return {
    id: c.id,
    category: c.category,
    status: run.status,
    toApprovalMs,
    planMs: times.planLeft ?? toApprovalMs,
    failure: run.failure?.code ?? null,
    receipt: run.receipt !== null,
    ...verdict,
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : 0;
};

function report(rows: Row[], startSeconds: number): void {
  const pad = (v: unknown, n: number) => String(v).padEnd(n);
  console.log(`${pad('case', 12)}${pad('result', 7)}${pad('status', 17)}${pad('to approval', 13)}${pad('plan', 8)}why`);
  for (const r of rows) {
    console.log(
      `${pad(r.id, 12)}${pad(r.passed ? 'pass' : 'FAIL', 7)}${pad(r.status, 17)}${pad(`${(r.toApprovalMs / 1000).toFixed(1)} s`, 13)}${pad(`${(r.planMs / 1000).toFixed(1)} s`, 8)}${r.why}`,
    );
  }
  const passed = rows.filter((r) => r.passed).length;
  const perCategory = Object.fromEntries(
    CATEGORIES.filter((k) => rows.some((r) => r.category === k)).map((k) => {
      const of = rows.filter((r) => r.category === k);
      const ok = of.filter((r) => r.passed).length;
      return [k, { cases: of.length, passed: ok, rate: Math.round((ok / of.length) * 1000) / 1000 }];
    }),
  );
  const latencies = rows.map((r) => r.toApprovalMs);
  console.log(
    JSON.stringify({
      eval: values.quick ? 'quick' : 'full',
      provider: values.provider ?? 'default',
      ...(values.model ? { model: values.model } : {}),
      cases: rows.length,
      passed,
      pass_rate: rows.length ? Math.round((passed / rows.length) * 1000) / 1000 : 0,
      categories: perCategory,
      plan_invalid: rows.filter((r) => r.failure === 'plan_invalid').length,
      plan_empty: rows.filter((r) => r.failure === 'plan_empty').length,
      receipts_missing: rows.filter((r) => !r.receipt).length,
      latency_to_approval_ms: { median: median(latencies), max: Math.max(0, ...latencies) },
      plan_ms: { median: median(rows.map((r) => r.planMs)), max: Math.max(0, ...rows.map((r) => r.planMs)) },
      start_seconds: Math.round(startSeconds * 10) / 10,
    }),
  );
}

if (values.provider && !['local', 'embedded'].includes(values.provider)) throw new Error('--provider takes local or embedded');
const service = await startEvalService({ provider: values.provider, modelPath: values.model });
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopping = true;
    void service.stop().finally(() => process.exit(130));
  });
}
try {
  console.log(`eval: ${cases.length} case(s) against npm start's defaults at ${service.base} (up in ${service.startSeconds.toFixed(1)} s)`);
  const rows: Row[] = [];
  for (const c of cases) {
    if (stopping) break;
    rows.push(await runCase(service, c));
  }
  report(rows, service.startSeconds);
} finally {
  if (!stopping) await service.stop();
}
