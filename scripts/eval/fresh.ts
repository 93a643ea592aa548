// `npm run eval -- --set fresh`: the fresh eval (issue 63), cases a helper session wrote without reading
// the planner (scripts/eval/fresh/cases.json, over its own catalog: files with every tool offered,
// memory, time and git), run against `npm start`'s defaults (the embedded model unless --provider says
// otherwise) and judged by scripts/eval/fresh-judge.ts. An approval is granted only where the case
// expects one; anything else asked is rejected, as a careful person would. The held-out half prints
// its totals only, never its cases, so nobody tunes on it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../config/paths.ts';
import { ScriptedWorld } from '../../tests/support/scripted-eval.ts';
import type { ScriptedCase } from '../../tests/support/scripted-model.ts';
import { substituted } from '../../tests/support/scripted-model.ts';
import { type FreshCase, type FreshVerdict, judgeFresh } from './fresh-judge.ts';
import { keyFor, startEvalService } from './service.ts';

export type FreshHalf = 'tuning' | 'held_out';

const TERMINAL = new Set(['completed', 'failed', 'needs_attention']);
const RUN_WAIT_MS = 240_000;
/** Retries of a request the service turned away for now (429, 503). */
const RETRIES_MAX = 60;
/** Between polls of a run: four a second stays inside the default rate limit (600 a minute per key). */
const POLL_MS = 250;
const here = (p: string) => path.join(projectRoot, 'scripts', 'eval', 'fresh', p);

/**
 * cases.json (tuning and held-out halves), then cases-extra.json … cases-extra13.json: 40 more tuning
 * cases each, written the same way by thirteen more helper sessions; then cases-heldout2.json: 40 more
 * held-out cases by a fourteenth, never read by whoever tunes the adapter, so the held-out half is 76.
 */
export const freshCases = (): FreshCase[] =>
  [
    'cases.json',
    'cases-extra.json',
    'cases-extra2.json',
    'cases-extra3.json',
    'cases-extra4.json',
    'cases-extra5.json',
    'cases-extra6.json',
    'cases-extra7.json',
    'cases-extra8.json',
    'cases-extra9.json',
    'cases-extra10.json',
    'cases-extra11.json',
    'cases-extra12.json',
    'cases-extra13.json',
    'cases-heldout2.json',
  ].flatMap((f) => JSON.parse(readFileSync(here(f), 'utf8')) as FreshCase[]);

interface FreshRow extends FreshVerdict {
  id: string;
  half: FreshHalf;
  asks: FreshCase['asks'];
  status: string;
  msToApproval: number;
}

/** The commits made after the repository's first, with their subjects and files. */
function commitsSince(repo: string): { message: string; files: string[] }[] {
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' });
  const first = git('rev-list', '--max-parents=0', 'HEAD').trim();
  const log = git('log', '--format=%x01%s', '--name-only', 'HEAD', '--not', first);
  return log
    .split('\x01')
    .filter((c) => c.trim())
    .map((c) => {
      const [message = '', ...files] = c.split('\n').filter((l) => l.trim());
      return { message, files };
    });
}

/** The quick slice `npm test` runs: the first two cases of each kind in each half. */
export function quickSlice(cases: FreshCase[]): FreshCase[] {
  const seen = new Map<string, number>();
  return cases.filter((c) => {
    const key = `${c.half}:${c.asks}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    return seen.get(key)! <= 2;
  });
}

export async function runFreshEval(options: { halves: readonly FreshHalf[]; provider?: string; show: boolean; quick?: boolean }): Promise<void> {
  const pyBin = execFileSync('bash', [path.join(projectRoot, 'scripts/ensure-mcp-eval-servers.sh'), '--path'], { encoding: 'utf8' }).trim();
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'gws-eval-fresh-'));
  const world = new ScriptedWorld({
    DIR: path.join(scratch, 'share'),
    REPO: path.join(scratch, 'repo'),
    MEMORY_FILE: path.join(scratch, 'memory.jsonl'),
    NODE_MODULES: path.join(projectRoot, 'node_modules'),
    PY_BIN: pyBin,
  });
  world.create();
  // FRESH_ONLY=f-01,f-03 runs those cases alone (tuning cases only: the held-out half is never picked apart).
  const only = process.env.FRESH_ONLY?.split(',');
  const chosen = freshCases().filter((c) => options.halves.includes(c.half) && (!only || (c.half === 'tuning' && only.includes(c.id))));
  const cases = substituted(options.quick ? quickSlice(chosen) : chosen, world.places);
  const catalog = substituted((JSON.parse(readFileSync(here('catalogs.json'), 'utf8')) as Record<string, object>).fresh!, world.places);
  const service = await startEvalService({ provider: options.provider, toolServers: catalog, env: { EVAL_MEMORY_FILE: world.places.MEMORY_FILE } });
  const rows: FreshRow[] = [];
  try {
    console.log(`eval (fresh): ${cases.length} case(s) against npm start's defaults at ${service.base} (up in ${service.startSeconds.toFixed(1)} s)`);
    // A 429 (the key's rate limit: a long run's polling spends it) or a 503 is waited out as the contract says, Retry-After
    // honoured; the same Idempotency-Key makes a retried POST the same run. Any other failure to start a run stops the eval, saying so.
    const request = async (method: 'GET' | 'POST', route: string, body?: unknown, headers: Record<string, string> = {}) => {
      for (let attempt = 0; ; attempt++) {
        const res = await fetch(`${service.base}${route}`, {
          method,
          headers: { authorization: `Bearer ${keyFor(service, method, route)}`, 'content-type': 'application/json', ...headers },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const json = (await res.json()) as any;
        if ((res.status === 429 || res.status === 503) && attempt < RETRIES_MAX) {
          await new Promise((r) => setTimeout(r, 1000 * Math.max(1, Number(res.headers.get('retry-after') ?? 1))));
          continue;
        }
        if (route === '/v1/agent-runs' && res.status >= 400) throw new Error(`${method} ${route}: ${res.status} ${json?.error?.code ?? ''}`);
        return { status: res.status, json };
      }
    };
    for (const c of cases) {
      world.reset(c as unknown as ScriptedCase);
      const from = service.deliveries.length;
      const t0 = Date.now();
      const created = await request('POST', '/v1/agent-runs', { input: c.input, memory: c.memory ?? false }, { 'Idempotency-Key': `${c.id}-${t0}` });
      const runId = created.json.run_id as string;
      let rounds = 0;
      let msToApproval = -1;
      let run: any;
      for (;;) {
        const deadline = Date.now() + RUN_WAIT_MS;
        for (;;) {
          run = (await request('GET', `/v1/agent-runs/${runId}`)).json;
          if (TERMINAL.has(run.status) || (run.status === 'awaiting_approval' && (run.approval?.round ?? 1) > rounds)) break;
          if (Date.now() > deadline) throw new Error(`${c.id}: run ${runId} stayed ${run.status}`);
          await new Promise((r) => setTimeout(r, POLL_MS));
        }
        if (msToApproval < 0) msToApproval = Date.now() - t0;
        if (TERMINAL.has(run.status)) break;
        rounds += 1;
        const body = c.expect.approval ? { decision: 'approve', reason: 'eval' } : { decision: 'reject', reason: 'Nobody asked for this.' };
        await request('POST', `/v1/agent-runs/${runId}/approval`, body, { 'Idempotency-Key': `${runId}-${rounds}` });
      }
      const parts = (() => {
        try {
          return (JSON.parse(run.result?.answer ?? '{"parts":[]}').parts ?? []) as { answer?: string }[];
        } catch {
          return [];
        }
      })();
      const verdict = judgeFresh(c, {
        status: run.status,
        rounds,
        answers: parts.map((p) => p.answer ?? '').join('\n'),
        deliveries: service.deliveries.slice(from).map((d) => d.body ?? {}),
        performed: ((run.receipt?.action_boundary?.effects_performed ?? []) as string[]).map((x) => x.replace(/:step_\d+$/, '')),
        file: (name) => world.file(name),
        isDirectory: (name) => existsSync(path.join(world.places.DIR, name)) && statSync(path.join(world.places.DIR, name)).isDirectory(),
        commits: commitsSince(world.places.REPO),
        memoryText: existsSync(world.places.MEMORY_FILE) ? readFileSync(world.places.MEMORY_FILE, 'utf8') : '',
      });
      rows.push({ id: c.id, half: c.half, asks: c.asks, status: run.status, msToApproval, ...verdict });
      if (options.show && c.half === 'tuning') {
        const leads = (run.plan?.hints ?? []).map(
          (h: { action: number; why: string }) => `${h.action}:${/led the next option by (-?[\d.]+)/.exec(h.why)?.[1] ?? '-'}`,
        );
        const tools = (run.plan?.steps ?? []).map((s: { tool: string }) => s.tool);
        console.log(`lead ${c.id} ${verdict.outcome} ${c.asks} tools=${tools.join(',') || '-'} leads=${leads.join(' ')}`);
      }
      if (options.show && c.half === 'tuning' && verdict.outcome !== 'success') {
        console.log(JSON.stringify({ case: c.id, plan: run.plan, unresolved: run.receipt?.unresolved, answer: run.result?.answer }, null, 1));
      }
    }
  } finally {
    await service.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
  report(rows);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0;

/** The tuning half case by case; both halves in totals (the held-out half only so). */
function report(rows: FreshRow[]): void {
  const pad = (v: unknown, n: number) => String(v).padEnd(n);
  const tuning = rows.filter((r) => r.half === 'tuning');
  if (tuning.length) console.log(`${pad('case', 8)}${pad('asks', 13)}${pad('result', 15)}${pad('status', 17)}why`);
  for (const r of tuning) {
    console.log(`${pad(r.id, 8)}${pad(r.asks, 13)}${pad(r.outcome, 15)}${pad(r.status, 17)}${r.nonsenseProposal ? '[nonsense proposal] ' : ''}${r.why}`);
  }
  const totals = (half: FreshHalf) => {
    const of = rows.filter((r) => r.half === half);
    const success = of.filter((r) => r.outcome === 'success').length;
    const couldDo = (r: FreshRow) => r.asks === 'information' || r.asks === 'effect';
    return {
      cases: of.length,
      successes: success,
      success_rate: of.length ? Math.round((success / of.length) * 1000) / 1000 : 0,
      false_successes: of.filter((r) => r.outcome === 'false_success').length,
      nonsense_proposals: of.filter((r) => r.nonsenseProposal).length,
      // An honest unresolved where a tool of the catalog could have done it, apart from the cases nothing could do.
      not_done_a_tool_could: of.filter((r) => r.outcome === 'not_done' && couldDo(r)).length,
      not_done_nothing_could: of.filter((r) => r.outcome === 'not_done' && !couldDo(r)).length,
      median_to_approval_ms: median(of.map((r) => r.msToApproval)),
      // Counts by what the cases ask (totals still: no case of the held-out half is named).
      by_asks: Object.fromEntries(
        [...new Set(of.map((r) => r.asks))].map((asks) => {
          const kind = of.filter((r) => r.asks === asks);
          const count = (outcome: FreshRow['outcome']) => kind.filter((r) => r.outcome === outcome).length;
          return [
            asks,
            {
              cases: kind.length,
              successes: count('success'),
              false_successes: count('false_success'),
              nonsense_proposals: kind.filter((r) => r.nonsenseProposal).length,
            },
          ];
        }),
      ),
    };
  };
  const halves = [...new Set(rows.map((r) => r.half))];
  console.log(JSON.stringify({ eval: 'fresh', ...Object.fromEntries(halves.map((h) => [h, totals(h)])) }));
}
