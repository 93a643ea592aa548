// The `gws` command-line client (bin/gws.mjs) against the real API, worker, Temporal dev server and
// Postgres: `gws run --watch` in a real pseudo-terminal (util-linux `script`), as plain lines when
// stdout is a pipe, and as JSON lines; approval, the run history, chat streaming and the exit codes.
// Also the event-stream follower against a stream that drops (reconnects with Last-Event-ID).
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setWebhookUrl } from '../services/tenants.ts';
import { main } from '../cli/gws/main.ts';
import { followSse } from '../cli/gws/sse.ts';
import { approvalLines, describeProgress, summaryLines } from '../cli/gws/format.ts';
import type { AgentRun } from '../client/index.ts';
import { buildClientDocument } from '../scripts/generate-client.ts';
import { webhookReceiver } from './support/fake-servers.ts';
import { newTenant, type RunStack, startRunStack, type TestTenant, waitForRun } from './support/run-stack.ts';

const GWS = fileURLToPath(new URL('../bin/gws.mjs', import.meta.url));
// Runs to its end on the local provider and needs attention: key phrases prepare, they perform neither action.
const LOCAL_INPUT = 'Review the vendor terms for renewal risk; then list the three largest obligations.';
// Delivery only: completes on the local provider once approved.
const EXTERNAL_INPUT = 'Tell the on-call channel that the incident timeline is ready.';
/** Any escape sequence (CSI or other ESC-introduced). */
const ESCAPE = /\x1b/;

let stack: RunStack;
let db: RunStack['app']['database']['db'];
let tenant: TestTenant;

beforeAll(async () => {
  stack = await startRunStack({ CHAT_KEEPALIVE_MS: '500' });
  db = stack.app.database.db;
  tenant = await newTenant(db, 100_000);
});
afterAll(async () => {
  await stack?.close();
});

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

const shellQuote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/**
 * Runs gws without blocking this process (whose event loop serves the API). `key`: GWS_API_KEY (the
 * tenant's core key unless given; null: unset); `approverKey`: GWS_APPROVER_KEY, which `gws approve` and
 * `gws reject` read (unset unless given). `tty`: inside a real pseudo-terminal (`script -qfec CMD
 * /dev/null`, which exits with the command's code); otherwise stdout and stderr are pipes.
 */
function gws(
  args: string[],
  options: { key?: string | null; approverKey?: string; tty?: boolean; env?: Record<string, string>; onStdout?: (text: string) => void } = {},
): Promise<Outcome> {
  const env: NodeJS.ProcessEnv = { ...process.env, GWS_BASE_URL: stack.app.url, ...options.env };
  // is-interactive (ora) turns the spinner off under CI; colours would vary with the runner.
  delete env.CI;
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  if (options.key === null) delete env.GWS_API_KEY;
  else env.GWS_API_KEY = options.key ?? tenant.key;
  if (options.approverKey === undefined) delete env.GWS_APPROVER_KEY;
  else env.GWS_APPROVER_KEY = options.approverKey;
  const command = [process.execPath, GWS, ...args];
  const child = options.tty
    ? // The terminal is sized as a real one is (`script` gives its pseudo-terminal the size of its own stdin, here none).
      spawn('script', ['-qfec', `stty cols 100 rows 40; exec ${command.map(shellQuote).join(' ')}`, '/dev/null'], {
        env: { ...env, TERM: 'xterm-256color' },
        stdio: ['pipe', 'pipe', 'pipe'],
      })
    : spawn(command[0]!, command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    options.onStdout?.(stdout);
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gws ${args.join(' ')} timed out; stdout: ${stdout.slice(-2_000)}; stderr: ${stderr.slice(-2_000)}`));
    }, 50_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      // `script` keeps its stdin open until the command ends; nothing is typed.
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('gws run --watch', () => {
  it('shows a live display in a terminal and exits 2 for a run that needs attention', async () => {
    const r = await gws(['run', LOCAL_INPUT, '--watch'], { tty: true });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    // The spinner is drawn with escape codes (ora's), and the steps and final state are on screen.
    expect(r.stdout).toMatch(ESCAPE);
    expect(r.stdout).toMatch(/executing · step 1 of 2/);
    expect(r.stdout).toMatch(/2 of 2 steps done/);
    expect(r.stdout).toContain('state: needs_attention');
    expect(r.stdout).toContain('verification: unverified');
    expect(r.stdout).toContain('unresolved: 2');
    // The live display never shows the run's input.
    expect(r.stdout).not.toContain('vendor contracts');
  });

  it('prints plain lines without escape codes when stdout is not a terminal', async () => {
    const r = await gws(['run', LOCAL_INPUT, '--watch']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).not.toMatch(ESCAPE);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^run run_\S+: /);
    // One line per event, oldest first, ending with the summary.
    expect(lines.some((l) => / run\.accepted: accepted/.test(l))).toBe(true);
    expect(lines.some((l) => / run\.executing: executing · step 1 of 2$/.test(l))).toBe(true);
    expect(lines.some((l) => / run\.step_finished: executing · step 2 of 2 · step_1 finished$/.test(l))).toBe(true);
    expect(lines.some((l) => / run\.needs_attention: needs_attention · 2 of 2 steps done$/.test(l))).toBe(true);
    expect(lines.slice(-4)).toEqual([
      'state: needs_attention',
      'verification: unverified',
      'unresolved: 2',
      'failure: unresolved_remainder (2 item(s) unresolved; see receipt.unresolved.)',
    ]);
    expect(r.stdout).not.toContain('vendor contracts');
  });

  it('gives JSON lines with --json: each event as streamed, then the result', async () => {
    const r = await gws(['run', LOCAL_INPUT, '--watch', '--json']);
    expect(r.code, r.stderr).toBe(2);
    const lines = jsonLines(r.stdout);
    const events = lines.slice(0, -1);
    expect(events[0]).toMatchObject({ kind: 'run.accepted', state: 'accepted' });
    for (const e of events) expect(e).toEqual(expect.objectContaining({ id: expect.any(String), run_id: expect.any(String), progress: expect.any(Object) }));
    expect(events.at(-1)).toMatchObject({ kind: 'run.needs_attention', state: 'needs_attention' });
    const result = lines.at(-1)!;
    expect(result).toMatchObject({
      kind: 'gws.result',
      state: 'needs_attention',
      verification_class: 'unverified',
      unresolved: 2,
      failure_code: 'unresolved_remainder',
      exit_code: 2,
    });
    expect((result.run as AgentRun).run_id).toBe(events[0]!.run_id);
  });

  it('exits 2 for a run that ends needs_attention, with the failure code in the summary', async () => {
    const poor = await newTenant(db, 0);
    const tty = await gws(['run', 'Summarise the quarterly report. Revenue rose 4%.', '--watch'], { key: poor.key, tty: true });
    expect(tty.code, tty.stdout).toBe(2);
    expect(tty.stdout).toContain('state: needs_attention');
    expect(tty.stdout).toContain('failure: insufficient_credits');
    const plain = await gws(['run', 'Summarise the quarterly report. Revenue rose 4%.', '--watch'], { key: poor.key });
    expect(plain.code).toBe(2);
    expect(plain.stdout).not.toMatch(ESCAPE);
    expect(plain.stdout).toContain('failure: insufficient_credits');
  });
});

describe('approval', () => {
  it('shows what the approval waits for and the command; gws approve lets the run complete', async () => {
    const hook = await webhookReceiver();
    try {
      const t = await newTenant(db, 100_000);
      await setWebhookUrl(db, t.name, hook.url, { allowLoopback: true });
      const created = await gws(['run', EXTERNAL_INPUT, '--json'], { key: t.key });
      expect(created.code, created.stderr).toBe(0);
      const runId = (JSON.parse(created.stdout) as AgentRun).run_id;
      await waitForRun(stack.api, t.key, runId, (run) => run.status === 'awaiting_approval');
      // `gws runs get` shows what the approval is about: the step and the exact message.
      const shown = await gws(['runs', 'get', runId], { key: t.key });
      expect(shown.stdout).toMatch(/approval: pending\n\s+step_\d+\s+webhook_delivery\n\s+message: "the incident timeline is ready"\n/);

      // A terminal watching the run: the effects and the command, then (after the decision) the end.
      let sawApproval!: () => void;
      const approvalShown = new Promise<void>((resolve) => (sawApproval = resolve));
      const watching = gws(['runs', 'get', runId, '--watch'], {
        key: t.key,
        tty: true,
        onStdout: (text) => {
          if (text.includes(`gws approve ${runId}`)) sawApproval();
        },
      });
      await approvalShown;
      const approved = await gws(['approve', runId, '--reason', 'checked the channel'], { key: t.key, approverKey: t.approverKey });
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toContain(`approved: run ${runId}`);

      const watched = await watching;
      expect(watched.code, watched.stdout).toBe(0);
      expect(watched.stdout).toMatch(/approval needed for 1 external effect/);
      expect(watched.stdout).toMatch(/step_\d+\s+webhook_delivery/);
      expect(watched.stdout).toContain(`approve: npx gws approve ${runId}`);
      expect(watched.stdout).toContain('state: completed');
      expect(watched.stdout).toContain('verification: verified');
      // The approver sees exactly the message that will be sent.
      expect(watched.stdout).toContain('message: "the incident timeline is ready"');
      expect(hook.received).toHaveLength(1);

      // Deciding again: the API's 409, its code and message on stderr, exit 1.
      const again = await gws(['reject', runId], { key: t.key, approverKey: t.approverKey });
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^gws: run_not_awaiting_approval: .+\(HTTP 409, request \S+\)\n$/);
    } finally {
      await hook.close();
    }
  });
});

describe('gws runs', () => {
  it('lists, gets and exports the run history', async () => {
    const t = await newTenant(db, 100_000);
    const first = await gws(['run', LOCAL_INPUT, '--watch', '--json'], { key: t.key });
    const runId = (jsonLines(first.stdout).at(-1)!.run as AgentRun).run_id;

    const list = await gws(['runs', 'list', '--json'], { key: t.key });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject({ object: 'list', data: [{ run_id: runId, status: 'needs_attention' }], has_more: false });
    const plainList = await gws(['runs', 'list', '--status', 'needs_attention'], { key: t.key });
    expect(plainList.stdout.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^${runId}\tneeds_attention · 2 of 2 steps done\tsvc-workspace\t`))]);

    const got = await gws(['runs', 'get', runId, '--json'], { key: t.key });
    expect(JSON.parse(got.stdout)).toMatchObject({ run_id: runId, status: 'needs_attention', receipt: { verification_class: 'unverified' } });
    const plainGet = await gws(['runs', 'get', runId], { key: t.key });
    expect(plainGet.stdout).toContain(`run: ${runId}\nstate: needs_attention`);

    const exported = await gws(['runs', 'export'], { key: t.key });
    expect(exported.code, exported.stderr).toBe(0);
    expect(jsonLines(exported.stdout).map((r) => r.run_id)).toEqual([runId]);

    const missing = await gws(['runs', 'get', 'run_nope'], { key: t.key });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^gws: not_found: .+\(HTTP 404, request \S+\)\n$/);
  });

  it('exits 1 with the error code for a bad key, and 64 for usage and configuration errors', async () => {
    const bad = await gws(['runs', 'list'], { key: 'gws_core_not-a-key' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^gws: invalid_api_key: /);
    expect((await gws(['runs', 'list'], { key: null })).code).toBe(64);
    expect((await gws(['runs', 'list', '--status', 'sideways'])).code).toBe(64);
    expect((await gws(['frobnicate'])).code).toBe(64);
    const unreachable = await gws(['runs', 'list'], { env: { GWS_BASE_URL: 'http://127.0.0.1:1' } });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^gws: cannot reach http:\/\/127\.0\.0\.1:1: /);
  });
});

describe('the typed client', () => {
  it('is generated from the document the server serves: the same operations and schemas', async () => {
    // `any`: the documents are walked generically
    const served: any = await (await fetch(`${stack.app.url}/openapi.json`)).json();
    const built: any = buildClientDocument();
    // The test stack enables the operators' codec endpoint (CODEC_ENDPOINT_ENABLED), which the client leaves out.
    const operations = (doc: any) =>
      Object.entries<any>(doc.paths)
        .filter(([p]) => !p.startsWith('/codec/'))
        .flatMap(([p, item]) => Object.keys(item).map((m) => `${m} ${p}`))
        .sort();
    expect(operations(built)).toEqual(operations(served));
    const schemas = (doc: any) => Object.fromEntries(Object.entries<any>(doc.components.schemas).filter(([name]) => !name.startsWith('Codec')));
    expect(Object.keys(built.components.schemas).sort()).toEqual(Object.keys(schemas(served)).sort());
    expect(built.components.schemas).toEqual(schemas(served));
  });
});

describe('main', () => {
  it('answers 64 for a usage error before reading the environment or sending anything', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await main(['runs', 'list', '--limit', '0'])).toBe(64);
      expect(stderr.mock.calls.map(([text]) => String(text)).join('')).toContain("option '--limit <n>' argument '0' is invalid");
    } finally {
      stderr.mockRestore();
    }
  });
});

describe('gws chat', () => {
  it('streams the answer as it arrives, and as chunks with --json', async () => {
    const question = 'Compare the hosting costs of our staging cluster. Which regions are cheapest?';
    const r = await gws(['chat', question]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('hosting costs');
    expect(r.stdout.endsWith('\n')).toBe(true);
    const json = await gws(['chat', question, '--json']);
    const chunks = jsonLines(json.stdout);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) expect(c).toMatchObject({ object: 'chat.completion.chunk', model: 'svc-workspace' });
    const text = chunks.map((c) => (c.choices as { delta: { content?: string } }[])[0]?.delta.content ?? '').join('');
    expect(`${text}\n`).toBe(r.stdout);
  });
});

describe('the event-stream follower', () => {
  it('reconnects with Last-Event-ID when the stream drops before the end', async () => {
    const seen: (string | undefined)[] = [];
    const server = http.createServer((req, res) => {
      const last = req.headers['last-event-id'] as string | undefined;
      seen.push(last);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const from = last ? Number(last) + 1 : 1;
      // Two events per connection, then the connection drops (no terminal event yet).
      for (let id = from; id < from + 2 && id <= 5; id++) res.write(`id: ${id}\nevent: tick\ndata: {"n":${id}}\n\n`);
      setTimeout(() => res.socket?.destroy(), 50);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const received: number[] = [];
      await followSse({
        open: (lastEventId) => fetch(url, { headers: lastEventId ? { 'last-event-id': lastEventId } : {} }),
        onMessage: (m) => {
          received.push((JSON.parse(m.data) as { n: number }).n);
          return received.at(-1) === 5 ? 'stop' : undefined;
        },
        sleep: async () => {},
      });
      expect(received).toEqual([1, 2, 3, 4, 5]);
      expect(seen).toEqual([undefined, '2', '4']);
    } finally {
      server.close();
    }
  });
});

describe('the words', () => {
  const progress = {
    state: 'executing' as const,
    steps_done: 1,
    steps_total: 3,
    current_step: 'execute' as const,
    current_plan_step: 'step_2',
    waiting_for: null,
  };
  it('describe progress as step n of m, and what an approval waits for', () => {
    expect(describeProgress('executing', progress)).toBe('executing · step 2 of 3 (step_2)');
    expect(describeProgress('executing', { ...progress, current_plan_step: 'step_1' }, 'run.step_finished')).toBe('executing · step 2 of 3 · step_1 finished');
    expect(
      describeProgress('planning', { ...progress, state: 'planning', steps_done: 0, steps_total: 0, current_step: 'reserve', current_plan_step: null }),
    ).toBe('planning · reserve');
    expect(
      describeProgress('awaiting_approval', { ...progress, state: 'awaiting_approval', steps_done: 0, current_step: 'approval', waiting_for: 'approval' }),
    ).toBe('awaiting_approval · waiting for approval · 0 of 3 steps done');
    const run = {
      run_id: 'run_x',
      input: 'secret plans',
      approval: { state: 'pending', effects: [{ step_id: 'step_3', tool: 'webhook_delivery', why: 'deliver' }], deadline: '2030-01-01T00:00:00.000Z' },
    } as unknown as AgentRun;
    expect(approvalLines(run)).toEqual([
      'approval needed for 1 external effect (decide before 2030-01-01T00:00:00.000Z):',
      '  step_3  webhook_delivery',
      'approve: npx gws approve run_x',
      'reject:  npx gws reject run_x',
      '(add --reason "…" to record why)',
    ]);
    expect(summaryLines({ status: 'failed', receipt: null, failure: { code: 'cancelled', message: 'Cancelled.' } } as unknown as AgentRun)).toEqual([
      'state: failed',
      'verification: none',
      'unresolved: 0',
      'failure: cancelled (Cancelled.)',
    ]);
  });
});
