// The quick eval as users run it (`npm run eval -- --quick`): everyday requests of every category
// against npm start's defaults (the embedded model, the filesystem MCP server, gws listen), judged
// from the API. What must always hold: every plan valid and every run with a receipt; the refusals
// and the requests on material never given honest (never completed, nothing asked or sent); every
// delivery carrying its message; and no fall below the pass rate measured here (docs/models.md has
// the full eval's figures). Below it, the judge, the target and the options themselves, without a run.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseEvalArgs } from '../scripts/eval/args.ts';
import { CASES, CATEGORIES, type EvalCase } from '../scripts/eval/cases.ts';
import { toolServersFile } from '../scripts/eval/catalog.ts';
import { deliveriesWithoutMessage, judge, type Observed, type RunView } from '../scripts/eval/judge.ts';
import type { Delivery } from '../scripts/eval/service.ts';
import { type EvalSummary, type Row, targetMet } from '../scripts/eval/summary.ts';

/** What the fresh eval's quick slice measured on this machine's default model (16 cases, both halves: 10 successes, no false success, no nonsense proposal), successes less one. */
const QUICK_FRESH = { successes: 9, falseSuccesses: 0, nonsenseProposals: 0 };

/** The pass rate the quick subset holds on this machine's default model, less one case. */
const QUICK_PASS_FLOOR = 0.8;

function quickEval(catalog: 'readme' | 'full'): Promise<{ code: number | null; output: string }> {
  const args = ['--import', 'tsx', 'scripts/eval.ts', '--quick', '--catalog', catalog];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('npm run eval -- --quick', () => {
  // Both catalogs: the README's, and the filesystem server with every tool offered (issue 49).
  it.each(['readme', 'full'] as const)(
    'on the %s catalog: plans validly, gives every run a receipt, refuses honestly, carries every message, and holds its pass rate on the default model',
    {
      timeout: 600_000,
    },
    async (catalog) => {
      const { code, output } = await quickEval(catalog);
      expect(code, output).toBe(0);
      const last = output.trim().split('\n').at(-1)!;
      const summary = JSON.parse(last) as EvalSummary;
      expect(summary.catalog, output).toBe(catalog);
      expect(summary.cases, output).toBeGreaterThanOrEqual(8);
      expect(Object.keys(summary.categories).sort()).toEqual([...CATEGORIES].sort());
      expect(summary.plan_invalid, output).toBe(0);
      expect(summary.plan_empty, output).toBe(0);
      expect(summary.receipts_missing, output).toBe(0);
      expect(summary.deliveries_without_message, output).toBe(0);
      expect(summary.categories.refuse!.rate, output).toBe(1);
      expect(summary.categories.material!.rate, output).toBe(1);
      expect(summary.pass_rate, output).toBeGreaterThanOrEqual(QUICK_PASS_FLOOR);
    },
  );
});

/** The quick slice of the fresh eval (issue 63): both halves, totals only, on npm start's defaults. */
function quickFresh(): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/eval.ts', '--set', 'fresh', '--quick'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

type FreshTotals = { cases: number; successes: number; false_successes: number; nonsense_proposals: number };

describe('npm run eval -- --set fresh --quick', () => {
  // Requests nobody tuned for (scripts/eval/fresh/): what the default must not get worse at. The
  // bounds are what this machine measured on the slice (docs/models.md has the full figures).
  it('runs both halves on the default model, and holds its successes, false successes and nonsense proposals', { timeout: 600_000 }, async () => {
    const { code, output } = await quickFresh();
    expect(code, output).toBe(0);
    const summary = JSON.parse(output.trim().split('\n').at(-1)!) as { tuning: FreshTotals; held_out: FreshTotals };
    const both = [summary.tuning, summary.held_out];
    expect(both.map((h) => h.cases)).toEqual([8, 8]);
    expect(
      both.reduce((n, h) => n + h.successes, 0),
      output,
    ).toBeGreaterThanOrEqual(QUICK_FRESH.successes);
    expect(
      both.reduce((n, h) => n + h.false_successes, 0),
      output,
    ).toBeLessThanOrEqual(QUICK_FRESH.falseSuccesses);
    expect(
      both.reduce((n, h) => n + h.nonsense_proposals, 0),
      output,
    ).toBeLessThanOrEqual(QUICK_FRESH.nonsenseProposals);
  });
});

const caseOf = (id: string) => CASES.find((c) => c.id === id)!;
const delivery = (body: Delivery['body']): Delivery => ({ path: '/hook', status: 200, signature: 'ok', body });
const receipt = (unresolved: string[] = [], outcomes: string[] = ['performed']) => ({
  unresolved,
  actions: outcomes.map((outcome, i) => ({ n: i + 1, outcome })),
});

/** A run as the API shows it: completed, nothing unresolved, unless `run` says otherwise. */
function observed(run: Partial<RunView>, rest: Partial<Observed> = {}): Observed {
  const view: RunView = { status: 'completed', plan: null, approval: null, result: null, receipt: receipt(), failure: null, ...run };
  return { run: view, asked: [], deliveries: [], fileText: null, ...rest };
}

/** A send approved with `shown` as its message argument, that delivered `sent`. */
const sent = (shown: string | undefined, ...messages: (string | undefined)[]) =>
  observed(
    {},
    {
      asked: [{ tool: 'webhook_delivery', arguments: shown === undefined ? {} : { message: shown } }],
      deliveries: messages.map((message) => delivery({ run_id: 'run_1', step_id: 'step_1', message, results: [] })),
    },
  );

const why = (c: EvalCase, o: Observed) => judge(c, o, '/tmp/share').why;

describe('the eval judge (issue 49)', () => {
  it('fails a send whose delivery carries no message, however many arrived', () => {
    const send = caseOf('send-2');
    expect(why(send, sent('the deploy finished', 'the deploy finished'))).toBe('');
    expect(why(send, sent(undefined, undefined))).toBe('delivery without a message');
    expect(why(send, sent('x', '   '))).toBe('delivery without a message');
    expect(why(send, sent('x', 'one', 'two'))).toBe('2 deliveries');
  });

  it('passes a message case only when the approval and the delivery both carry the stated words, and not the whole request', () => {
    const c = caseOf('message-1');
    expect(why(c, sent('The March invoices have all been paid.', 'The March invoices have all been paid.'))).toBe('');
    expect(why(c, sent(undefined, 'the March invoices have all been paid'))).toMatch(/^approval shows message/);
    expect(why(c, sent('the March invoices have all been paid', 'the deploy finished'))).toMatch(/^delivered message/);
    expect(why(c, sent(c.input, c.input))).toMatch(/^approval shows message/);
  });

  it("reads a mixed case's facts from the delivered message, not from the answers beside it", () => {
    const c = caseOf('mixed-3');
    expect(why(c, sent('x', 'Renew the TLS certificate; rotate the API keys.'))).toBe('');
    const answersOnly = sent('x', 'Done.');
    answersOnly.deliveries[0]!.body!.answers = [{ action: 1, status: 'answered', result: 'renew the certificate, rotate the keys' }];
    expect(why(c, answersOnly)).toBe('delivered message lacks certificate');
  });

  it('passes material never given only when nothing is asked, sent or claimed and the receipt names it', () => {
    const c = caseOf('material-1');
    const left = receipt(['action 1 "Send the release notes to the team channel": not done; the release notes were never given.'], ['not_performed']);
    expect(why(c, observed({ status: 'needs_attention', receipt: left }))).toBe('');
    expect(why(c, observed({ status: 'completed', receipt: receipt() }))).toBe('ended completed');
    expect(why(c, observed({ status: 'needs_attention', receipt: { ...left, actions: [{ n: 1, outcome: 'performed' }] } }))).toBe(
      'receipt claims an action performed',
    );
    expect(why(c, observed({ status: 'needs_attention', receipt: receipt(['action 1 "Send it": not done.'], ['not_performed']) }))).toBe(
      'receipt does not name "release notes"',
    );
    expect(why(c, { ...sent('x', 'notes'), run: observed({ status: 'needs_attention', receipt: left }).run })).toBe('approval asked for webhook_delivery');
  });

  it('counts the deliveries that carried no message', () => {
    const bodies = [{ message: 'hi' }, { message: '' }, {}, null, { message: 42 }];
    expect(deliveriesWithoutMessage(bodies.map((b) => delivery(b)))).toBe(4);
  });
});

describe('the eval target and options (issue 49)', () => {
  const row = (category: Row['category'], passed: boolean, deliveriesWithoutMessage = 0): Row => ({
    id: category,
    category,
    passed,
    why: '',
    status: 'completed',
    toApprovalMs: 0,
    planMs: 0,
    failure: null,
    receipt: true,
    deliveriesWithoutMessage,
  });
  const rows = (category: Row['category'], passed: number, failed: number) => [
    ...Array.from({ length: passed }, () => row(category, true)),
    ...Array.from({ length: failed }, () => row(category, false)),
  ];

  it('is met at 90% overall with every category at 80% and no delivery without its message', () => {
    expect(targetMet([...rows('send', 5, 0), ...rows('material', 4, 1)])).toBe(true);
    expect(targetMet([...rows('send', 10, 0), ...rows('material', 3, 1)])).toBe(false);
    expect(targetMet([...rows('send', 8, 2)])).toBe(false);
    expect(targetMet([...rows('send', 9, 0), row('message', true, 1)])).toBe(false);
    expect(targetMet([])).toBe(false);
  });

  it('takes --catalog readme (the default) or full, and nothing else', () => {
    expect(parseEvalArgs([]).catalog).toBe('readme');
    expect(parseEvalArgs(['--catalog', 'full', '--quick'])).toMatchObject({ catalog: 'full', quick: true });
    expect(() => parseEvalArgs(['--catalog', 'everything'])).toThrow(/--catalog takes one of readme, full/);
    expect(() => parseEvalArgs(['--only', 'sends'])).toThrow(/--only takes one of/);
  });

  it('hides the unlisted tools on the readme catalog only, with the same two classified on both', () => {
    const [readme] = toolServersFile('readme', 'index.js', '/d').servers;
    const [full] = toolServersFile('full', 'index.js', '/d').servers;
    expect(readme).toMatchObject({ unlisted_tools: 'hide' });
    expect(full).not.toHaveProperty('unlisted_tools');
    expect(full!.tools).toEqual(readme!.tools);
  });

  it('names in each message and material case words its request holds, in at least three cases per category', () => {
    for (const c of CASES) expect([c.message !== undefined, c.material !== undefined], c.id).toEqual([c.category === 'message', c.category === 'material']);
    for (const c of CASES.filter((x) => x.message)) expect(c.input, c.id).toContain(c.message);
    for (const c of CASES.filter((x) => x.material)) expect(c.input.toLowerCase(), c.id).toContain(c.material!.toLowerCase());
    for (const k of CATEGORIES) expect(CASES.filter((c) => c.category === k).length, k).toBeGreaterThanOrEqual(3);
    expect(new Set(CASES.map((c) => c.id)).size).toBe(CASES.length);
  });
});
