// Runs one case of the scripted capable model (scripts/eval/scripted/cases.json) through the service
// and judges it from the API and from what arrived: the same runner for tests/tool-calling.test.ts and
// `npm run eval -- --provider scripted`. The world each case starts from: an empty share, a git
// repository at its first commit, an empty memory graph, and the case's seeds.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { ScriptedCase } from './scripted-model.ts';

export interface Places {
  DIR: string;
  REPO: string;
  MEMORY_FILE: string;
  NODE_MODULES: string;
  PY_BIN: string;
}

/** The folders and files the scripted catalogs' servers work on (their $DIR, $REPO, $MEMORY_FILE). */
export class ScriptedWorld {
  private first = '';
  constructor(readonly places: Places) {}

  private git(...args: string[]): string {
    const who = { GIT_AUTHOR_NAME: 'eval', GIT_AUTHOR_EMAIL: 'eval@example.com', GIT_COMMITTER_NAME: 'eval', GIT_COMMITTER_EMAIL: 'eval@example.com' };
    return execFileSync('git', ['-C', this.places.REPO, ...args], { encoding: 'utf8', env: { ...process.env, ...who } });
  }

  create(): void {
    mkdirSync(this.places.DIR, { recursive: true });
    mkdirSync(this.places.REPO, { recursive: true });
    this.git('init', '-q', '-b', 'main');
    writeFileSync(path.join(this.places.REPO, 'README.md'), 'hi\n');
    this.git('add', 'README.md');
    this.git('commit', '-q', '-m', 'initial commit');
    this.first = this.git('rev-parse', 'HEAD').trim();
    writeFileSync(this.places.MEMORY_FILE, '');
  }

  /** Lays the world anew for `c`: nothing any earlier case did is left. */
  reset(c: ScriptedCase): void {
    const { DIR, REPO, MEMORY_FILE } = this.places;
    for (const entry of readdirSync(DIR)) rmSync(path.join(DIR, entry), { recursive: true, force: true });
    this.git('reset', '-q', '--hard', this.first);
    this.git('clean', '-qfdx');
    // A seeded file may sit in a folder of its own ("archive/price-list-2023.txt").
    const seed = (file: string, text: string) => {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
    };
    for (const [name, text] of Object.entries(c.seed?.files ?? {})) seed(path.join(DIR, name), text);
    for (const [name, text] of Object.entries(c.seed?.repo_files ?? {})) seed(path.join(REPO, name), text);
    const memory = (c.seed?.memory ?? []).map((e) => JSON.stringify({ type: 'entity', ...e }));
    writeFileSync(MEMORY_FILE, memory.length ? `${memory.join('\n')}\n` : '');
  }

  file(name: string): string | null {
    const at = path.join(this.places.DIR, name);
    return existsSync(at) ? readFileSync(at, 'utf8') : null;
  }
}

/** What the runner needs of an API client: a JSON request that answers status and body. */
export type EvalRequest = (method: 'GET' | 'POST', route: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; json: any }>;

export interface CaseOutcome {
  /** What the case's expectations found wrong; empty: the case passed. */
  problems: string[];
  status: string;
  rounds: number;
  /** From the run's creation to its first approval wait, or to its end for a run that needs none. */
  msToApproval: number;
}

const TERMINAL = new Set(['completed', 'failed', 'needs_attention']);
/** Equal as JSON values, whatever the order of their keys. */
const same = (a: unknown, b: unknown) => isDeepStrictEqual(a, b);

async function until(request: EvalRequest, runId: string, done: (run: any) => boolean, withinMs: number): Promise<any> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const { json } = await request('GET', `/v1/agent-runs/${runId}`);
    if (done(json)) return json;
    if (Date.now() > deadline) throw new Error(`run ${runId} stayed ${json.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Runs `c` and judges it: the run's end, its approval rounds (each showing exactly the calls the
 * script proposed, decided as the case says), the deliveries that arrived, the files, the answers,
 * the effects performed, and the scripted model's own complaints (a tool it was not offered).
 * `request` submits and reads with a core key; `decide` sends the decisions, with an approver key
 * (a core key never decides).
 */
export async function runScriptedCase(
  request: EvalRequest,
  c: ScriptedCase,
  world: ScriptedWorld,
  arrived: () => { to?: unknown; message?: unknown }[],
  modelProblems: () => string[],
  decide: EvalRequest = request,
): Promise<CaseOutcome> {
  const problems: string[] = [];
  const t0 = Date.now();
  const created = await request('POST', '/v1/agent-runs', { input: c.input, memory: c.memory ?? false }, { 'Idempotency-Key': `${c.id}-${t0}` });
  if (created.status !== 201) return { problems: [`create answered ${created.status}`], status: 'none', rounds: 0, msToApproval: 0 };
  const runId = created.json.run_id as string;
  let rounds = 0;
  let msToApproval = -1;
  let run: any;
  for (;;) {
    run = await until(request, runId, (r) => TERMINAL.has(r.status) || (r.status === 'awaiting_approval' && (r.approval?.round ?? 1) > rounds), 60_000);
    if (msToApproval < 0) msToApproval = Date.now() - t0;
    if (TERMINAL.has(run.status)) break;
    rounds += 1;
    const proposed = c.script.flatMap((s) => ('calls' in s ? s.calls : []));
    for (const effect of run.approval.effects) {
      if (!proposed.some((call) => call.name === effect.tool && same(call.arguments, effect.arguments))) {
        problems.push(`round ${rounds} shows ${effect.tool} with arguments the model did not propose`);
      }
    }
    const decision = c.decisions?.[rounds - 1] ?? 'approve';
    const body = decision === 'approve' ? { decision: 'approve', reason: 'checked' } : { decision: 'reject', reason: decision.reject };
    const decided = await decide('POST', `/v1/agent-runs/${runId}/approval`, body, { 'Idempotency-Key': `${runId}-${rounds}` });
    if (decided.status !== 200) problems.push(`the decision of round ${rounds} answered ${decided.status}`);
  }
  const e = c.expect;
  problems.push(...modelProblems().filter((p) => p.startsWith(`${c.id}:`)));
  if (run.status !== e.status) problems.push(`ended ${run.status}, not ${e.status}: ${JSON.stringify(run.receipt?.unresolved ?? run.failure)}`);
  if (rounds !== (e.rounds ?? 0)) problems.push(`${rounds} approval round(s), not ${e.rounds ?? 0}`);
  const deliveries = arrived().map((d) => ({ to: d.to, message: d.message }));
  if (!same(deliveries, e.deliveries ?? [])) problems.push(`delivered ${JSON.stringify(deliveries)}`);
  for (const [name, text] of Object.entries(e.files ?? {})) if (world.file(name) !== text) problems.push(`${name} holds ${JSON.stringify(world.file(name))}`);
  for (const name of e.absent ?? []) if (world.file(name) !== null) problems.push(`${name} was written`);
  const parts = (() => {
    try {
      return (JSON.parse(run.result?.answer ?? '{"parts":[]}').parts ?? []) as { answer?: string }[];
    } catch {
      return [];
    }
  })();
  const answers = parts.map((p) => p.answer ?? '').join('\n');
  for (const a of e.answers ?? []) if (!answers.includes(a)) problems.push(`no answer holds "${a}"`);
  const performed = [...new Set(((run.receipt?.action_boundary?.effects_performed ?? []) as string[]).map((x) => x.replace(/:step_\d+$/, '')))].sort();
  if (!same(performed, [...new Set(e.performed ?? [])].sort())) problems.push(`performed ${JSON.stringify(performed)}`);
  // Completed claims everything performed: nothing may be left unresolved then.
  if (run.status === 'completed' && (run.receipt?.unresolved ?? []).length) problems.push('completed with unresolved items');
  return { problems, status: run.status, rounds, msToApproval };
}
