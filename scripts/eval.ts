// `npm run eval`: everyday requests against `npm start`'s defaults (the embedded model, the
// filesystem MCP server plugged in as the README shows or with every tool offered, `gws listen`
// receiving deliveries), each judged from the API alone (and what arrived). Prints a table, then one
// JSON line (scripts/eval/summary.ts): the catalog it ran, cases, passed, pass_rate, the rate per
// category, deliveries_without_message, target_met, plan_invalid, plan_empty, receipts missing, and
// the time to approval (or to the end, for a run that needs none). scripts/eval/cases.ts lists the
// cases; `npm run eval -- --help` (scripts/eval/args.ts) the options.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseEvalArgs, USAGE } from './eval/args.ts';
import { CASES, type EvalCase } from './eval/cases.ts';
import { deliveriesWithoutMessage, expectsApproval, judge, messageOf, type RunView } from './eval/judge.ts';
import { runFreshEval } from './eval/fresh.ts';
import { runScriptedEval } from './eval/scripted.ts';
import { type EvalService, keyFor, startEvalService } from './eval/service.ts';
import { type Row, summarise, targetMet } from './eval/summary.ts';

/** The options, or the usage and exit 2 on one it cannot take (before anything starts). */
function optionsOrUsage() {
  try {
    return parseEvalArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
}

const options = optionsOrUsage();
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
if (options.fresh) {
  await runFreshEval({ halves: options.fresh, provider: options.provider, show: options.show, quick: options.quick });
  process.exit(0);
}
if (options.provider === 'scripted') {
  const passed = await runScriptedEval({ catalogs: options.scriptedCatalogs, quick: options.quick });
  process.exit(passed || !options.strict ? 0 : 1);
}
const cases = CASES.filter((c) => (!options.quick || c.quick) && (!options.only || c.category === options.only));

/** How long a run may take to reach approval or its end, and then its end. */
const RUN_WAIT_MS = 240_000;
const TERMINAL = new Set(['completed', 'failed', 'needs_attention']);

/** Polling faster than this would spend the key's 600 requests a minute on one run and meet 429s. */
const POLL_MS = 200;

async function api(s: EvalService, method: string, route: string, body?: unknown, headers: Record<string, string> = {}) {
  for (;;) {
    const res = await fetch(`${s.base}${route}`, {
      method,
      headers: { authorization: `Bearer ${keyFor(s, method, route)}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.json()) as Record<string, unknown>;
    // As a client should: a rate limit clears with time (a retried create keeps its idempotency key).
    // A 429 without Retry-After (credits, budget) would never clear, so it fails like any other.
    const retryAfter = res.status === 429 ? res.headers.get('retry-after') : null;
    if (retryAfter) {
      await new Promise((r) => setTimeout(r, Number(retryAfter) * 1000));
      continue;
    }
    if (res.status >= 400) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }
}

/** Polls the run until `done` says so; returns it and when planning was left. */
async function follow(s: EvalService, runId: string, done: (r: RunView) => boolean, t0: number, times: { planLeft?: number }) {
  const deadline = Date.now() + RUN_WAIT_MS;
  for (;;) {
    const run = (await api(s, 'GET', `/v1/agent-runs/${runId}`)) as unknown as RunView;
    if (times.planLeft === undefined && !['accepted', 'planning'].includes(run.status)) times.planLeft = Date.now() - t0;
    if (done(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${run.status} after ${RUN_WAIT_MS} ms`);
    await new Promise((r) => setTimeout(r, POLL_MS));
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
  if (options.show && !verdict.passed) {
    const { plan, failure, receipt, result } = run as RunView & { plan: Record<string, unknown> | null };
    const sent = deliveries.map(messageOf);
    console.log(JSON.stringify({ case: c.id, plan, failure, unresolved: receipt?.unresolved, answer: result?.answer, sent }, null, 1));
  }
  return {
    id: c.id,
    category: c.category,
    status: run.status,
    toApprovalMs,
    planMs: times.planLeft ?? toApprovalMs,
    failure: run.failure?.code ?? null,
    receipt: run.receipt !== null,
    deliveriesWithoutMessage: deliveriesWithoutMessage(deliveries),
    ...verdict,
  };
}

function report(rows: Row[], startSeconds: number): void {
  const pad = (v: unknown, n: number) => String(v).padEnd(n);
  console.log(`${pad('case', 12)}${pad('result', 7)}${pad('status', 17)}${pad('to approval', 13)}${pad('plan', 8)}why`);
  for (const r of rows) {
    console.log(
      `${pad(r.id, 12)}${pad(r.passed ? 'pass' : 'FAIL', 7)}${pad(r.status, 17)}${pad(`${(r.toApprovalMs / 1000).toFixed(1)} s`, 13)}${pad(`${(r.planMs / 1000).toFixed(1)} s`, 8)}${r.why}`,
    );
  }
  const { quick, catalog, provider, model } = options;
  console.log(JSON.stringify(summarise(rows, { quick, catalog, provider, model, startSeconds })));
}

const service = await startEvalService({ provider: options.provider, modelPath: options.model, catalog: options.catalog });
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopping = true;
    void service.stop().finally(() => process.exit(130));
  });
}
try {
  console.log(
    `eval: ${cases.length} case(s) against npm start's defaults on the ${options.catalog} catalog at ${service.base} (up in ${service.startSeconds.toFixed(1)} s)`,
  );
  const rows: Row[] = [];
  for (const c of cases) {
    if (stopping) break;
    rows.push(await runCase(service, c));
  }
  report(rows, service.startSeconds);
  // Only on request: the bench runs the quick eval on the local provider, which misses the target by design.
  if (options.strict && !targetMet(rows)) process.exitCode = 1;
} finally {
  if (!stopping) await service.stop();
}
