// Operator-configured tool servers (MCP), against the real reference servers installed from npm:
// @modelcontextprotocol/server-everything over stdio and streamable HTTP, and
// @modelcontextprotocol/server-filesystem on a temporary directory as an approved external step of a
// run whose model is a scripted OpenAI-compatible server.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../config/config-error.ts';
import { loadConfig } from '../config/env.ts';
import { toolCalls } from '../db/schema.ts';
import type { RunningWorker } from '../runtime/worker.ts';
import { parseToolServers, type ToolServerSpec } from '../config/tool-servers.ts';
import { setRoute } from '../services/routing.ts';
import { connectToolServers, type ToolServers } from '../services/tool-servers.ts';
import { reportReply, scriptedUpstream } from './support/fake-servers.ts';
import { freePort } from './support/free-port.ts';
import { isTerminal, newTenant, type RunStack, spawnCrashingWorker, startRunStack, startTestWorker, type TestTenant, waitForRun } from './support/run-stack.ts';
import { until } from './support/until.ts';

const require = createRequire(import.meta.url);
const everythingMain = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const filesystemMain = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const logger = pino({ level: 'silent' });
const tenant = { id: 'ten_x', name: 'acme' };

const everything = (extra: Partial<ToolServerSpec> = {}): ToolServerSpec =>
  ({
    id: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everythingMain, 'stdio'],
    env: {},
    tools: { echo: { effect: 'read' }, 'get-sum': { effect: 'read' }, 'trigger-long-running-operation': { effect: 'read' } },
    tenants: ['*'],
    ...extra,
  }) as ToolServerSpec;

describe('the tool servers file', () => {
  it('is validated at start: a bad field is named, secrets are references, never values', () => {
    const problems = (text: string) => {
      try {
        parseToolServers(text, 'tools.json');
        return [];
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).problems;
      }
    };
    expect(problems('{')).toEqual(['TOOL_SERVERS_FILE tools.json: not valid JSON']);
    expect(problems(JSON.stringify({ servers: [{ id: 'files', transport: 'stdio', command: 'node', env: { TOKEN: 'secret-value' } }] }))).toEqual([
      expect.stringMatching(/^TOOL_SERVERS_FILE tools\.json: servers\.0\.env\.TOKEN: /),
    ]);
    expect(problems(JSON.stringify({ servers: [{ id: 'Bad__Id', transport: 'stdio', command: 'node' }] }))[0]).toMatch(/servers\.0\.id/);
    expect(problems(JSON.stringify({ servers: [{ id: 'x', transport: 'carrier-pigeon' }] }))[0]).toMatch(/servers\.0\.transport/);
    expect(problems(JSON.stringify({ servers: [{ id: 'x', transport: 'stdio', command: 'node', tools: { a: { effect: 'write' } } }] }))[0]).toMatch(
      /servers\.0\.tools\.a\.effect/,
    );
    // A fixed argument is a plain value the approver sees, never an object (a secret reference has no place there).
    expect(
      problems(JSON.stringify({ servers: [{ id: 'x', transport: 'stdio', command: 'node', fixed_arguments: { token: { from_env: 'TOKEN' } } }] }))[0],
    ).toMatch(/servers\.0\.fixed_arguments\.token/);
    const ok = parseToolServers(
      JSON.stringify({
        servers: [{ id: 'crm', transport: 'streamable_http', url: 'https://mcp.example.com/mcp', headers: { Authorization: { from_env: 'CRM_MCP_AUTH' } } }],
      }),
      'tools.json',
    );
    expect(ok[0]).toMatchObject({ id: 'crm', tenants: ['*'], tools: {} });
  });

  it('is read when the configuration is loaded, so a bad file stops the start', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gws-bad-tools-'));
    try {
      const file = path.join(dir, 'tools.json');
      writeFileSync(file, JSON.stringify({ servers: [{ id: 'files', transport: 'stdio' }] }));
      expect(() => loadConfig({ TOOL_SERVERS_FILE: file })).toThrow(/TOOL_SERVERS_FILE .*tools\.json: servers\.0\.command/);
      expect(() => loadConfig({ TOOL_SERVERS_FILE: path.join(dir, 'missing.json') })).toThrow(/cannot be read \(ENOENT\)/);
      expect(loadConfig({}).runs.toolServers.servers).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a stdio server (server-everything)', () => {
  let servers: ToolServers;
  beforeAll(async () => {
    servers = connectToolServers([everything(), everything({ id: 'broken', command: '/nonexistent/mcp-server', tenants: ['other'] })], { logger });
    await until(() => servers.states().everything?.state === 'available', 'server-everything to list its tools', { withinMs: 30_000 });
  });
  afterAll(() => servers.close());

  it('lists its tools as <server>__<tool>, with the operator’s class; an unclassified tool is external, whatever its hints', () => {
    const tools = servers.forTenant(tenant);
    const byName = new Map(tools.map((t) => [t.tool.name, t]));
    expect(byName.get('everything__echo')).toMatchObject({ status: 'available', tool: { effect: 'read', classified: true } });
    // The server says readOnlyHint for this one; the operator did not classify it, so it is external.
    const annotated = tools.find((t) => t.tool.server === 'everything' && t.tool.hints?.readOnlyHint === true && !t.tool.classified);
    expect(annotated?.tool.effect).toBe('external');
    // The server that cannot start is down, and hides nothing of the other one.
    expect(servers.states().broken).toMatchObject({ state: 'down' });
    expect(tools.filter((t) => t.tool.server === 'everything').every((t) => t.status === 'available')).toBe(true);
  });

  it('calls echo and get-sum, and reports a tool error as isError', async () => {
    const echo = await servers.call(servers.find('everything__echo')!, { message: 'hello' }, { timeoutMs: 10_000 });
    expect(JSON.stringify(echo.content)).toContain('hello');
    const sum = await servers.call(servers.find('everything__get-sum')!, { a: 2, b: 3 }, { timeoutMs: 10_000 });
    expect(JSON.stringify(sum.content)).toContain('5');
    const bad = await servers.call(servers.find('everything__get-sum')!, { a: 'two' }, { timeoutMs: 10_000 }).catch((e) => e);
    expect(bad instanceof McpError || bad?.isError === true).toBe(true);
  });

  it('times a long call out, and cancels one when asked (MCP cancellation)', async () => {
    const long = servers.find('everything__trigger-long-running-operation')!;
    const timedOut = await servers.call(long, { duration: 5, steps: 5 }, { timeoutMs: 300 }).catch((e) => e);
    expect(timedOut).toBeInstanceOf(McpError);
    // Cancelled once the call is under way (its first progress notification): it ends at once, not after its 5 s.
    const abort = new AbortController();
    const started = Date.now();
    const cancelled = await servers
      .call(long, { duration: 5, steps: 5 }, { timeoutMs: 10_000, signal: abort.signal, onProgress: () => abort.abort() })
      .catch((e) => e);
    expect(cancelled).toBeInstanceOf(Error);
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});

describe('fixed arguments of a server (server-filesystem)', () => {
  let servers: ToolServers;
  const share = mkdtempSync(path.join(os.tmpdir(), 'gws-fixed-'));
  const fs = (id: string, fixed: Record<string, unknown>) =>
    ({
      id,
      transport: 'stdio',
      command: process.execPath,
      args: [filesystemMain, share],
      env: {},
      tools: {},
      tenants: ['acme'],
      fixed_arguments: fixed,
    }) as ToolServerSpec;
  beforeAll(async () => {
    servers = connectToolServers([fs('notes', { path: path.join(share, 'notes.txt') }), fs('typo', { path: 42 })], { logger });
    await until(() => servers.states().notes?.state === 'available' && servers.states().typo?.state === 'available', 'both servers to list their tools', {
      withinMs: 30_000,
    });
  });
  afterAll(async () => {
    await servers.close();
    rmSync(share, { recursive: true, force: true });
  });

  it('shows the values to the tenants the server serves only, and offers no tool whose schema refuses its value', () => {
    const of = (t: { id: string; name: string }, name: string) => servers.forTenant(t).find((x) => x.tool.name === name)!;
    expect(of(tenant, 'notes__write_file')).toMatchObject({ status: 'available', tool: { fixedArguments: { path: path.join(share, 'notes.txt') } } });
    // Another tenant sees the tool not_configured, and not which file the operator fixed.
    const other = of({ id: 'ten_y', name: 'globex' }, 'notes__write_file');
    expect(other.status).toBe('not_configured');
    expect(other.tool.fixedArguments).toEqual({});
    // A path of 42 is no string: each tool that takes a path is not offered, saying why; one that takes none still is.
    expect(of(tenant, 'typo__write_file')).toMatchObject({ status: 'not_configured', reason: expect.stringContaining('fixed_arguments path') });
    expect(of(tenant, 'typo__list_allowed_directories')).toMatchObject({ status: 'available' });
  });
});

describe('a stdio server of a process killed with SIGKILL', () => {
  it('does not outlive it: its stdin closes and it exits', { timeout: 60_000 }, async () => {
    const holder = spawn(process.execPath, ['--import', 'tsx', 'tests/support/tool-server-holder.ts'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    holder.stdout!.on('data', (d) => (out += d));
    await until(() => out.includes('ready'), 'the holder to connect its server', { withinMs: 45_000 });
    const children = () => readFileSync(`/proc/${holder.pid}/task/${holder.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    const [server] = children();
    expect(readFileSync(`/proc/${server}/cmdline`, 'utf8')).toContain('server-everything');
    holder.kill('SIGKILL');
    // Gone, or a zombie waiting for whoever adopted it to reap it: either way it no longer runs.
    const running = () => existsSync(`/proc/${server}`) && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${server}/stat`, 'utf8'));
    await until(() => !running(), 'the server to exit after its client was killed', { withinMs: 10_000 });
  });
});

const probeMain = path.resolve('tests/support/probe-tool-server.ts');
/** The probe server (tests/support/probe-tool-server.ts), given `dir` so the test can find it and read what it wrote. */
const probe = (dir: string, extra: Partial<ToolServerSpec> = {}): ToolServerSpec =>
  ({
    id: 'probe',
    transport: 'stdio',
    command: process.execPath,
    args: ['--import', 'tsx', probeMain, dir],
    env: {},
    tools: { 'add-tool': { effect: 'read' }, added: { effect: 'read' }, wait: { effect: 'read' } },
    tenants: ['*'],
    ...extra,
  }) as ToolServerSpec;

/** The running processes started with `dir` as an argument. */
function processesOf(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(dir) && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${entry}/stat`, 'utf8')))
        pids.push(Number(entry));
    } catch {} // gone meanwhile, or not ours to read
  }
  return pids;
}

describe('a stdio server that crashes, changes its tools, or is cancelled', () => {
  let dir: string;
  let servers: ToolServers;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gws-probe-'));
    servers = connectToolServers([probe(dir)], { logger });
    await until(() => servers.states().probe?.state === 'available', 'the probe server to list its tools', { withinMs: 30_000 });
  });
  afterAll(async () => {
    await servers.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refreshes its tools on notifications/tools/list_changed', async () => {
    expect(servers.find('probe__added')).toBeUndefined();
    await servers.call(servers.find('probe__add-tool')!, {}, { timeoutMs: 10_000 });
    await until(() => servers.find('probe__added') !== undefined, 'the added tool to be listed');
    expect(servers.forTenant(tenant).find((t) => t.tool.name === 'probe__added')).toMatchObject({ status: 'available' });
  });

  it('sends MCP cancellation when a call is aborted, and the server sees it', async () => {
    const abort = new AbortController();
    const call = servers.call(servers.find('probe__wait')!, { seconds: 60 }, { timeoutMs: 90_000, signal: abort.signal });
    setTimeout(() => abort.abort(), 300);
    await expect(call).rejects.toThrow();
    await until(() => existsSync(path.join(dir, 'cancelled')), 'the server to see notifications/cancelled');
  });

  it('is started again after it crashes, and its tools come back', { timeout: 60_000 }, async () => {
    const [pid] = processesOf(dir);
    expect(pid).toBeDefined();
    process.kill(pid!, 'SIGKILL');
    await until(() => servers.states().probe?.state === 'down', 'the crash to be seen');
    expect(servers.forTenant(tenant).find((t) => t.tool.name === 'probe__wait')).toMatchObject({ status: 'not_configured' });
    await until(() => servers.states().probe?.state === 'available', 'the server to be started again', { withinMs: 30_000 });
    const [again] = processesOf(dir);
    expect(again).not.toBe(pid);
    const answer = await servers.call(servers.find('probe__add-tool')!, {}, { timeoutMs: 10_000 });
    expect(answer.content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('is stopped on close: no process is left behind', async () => {
    const spare = connectToolServers([probe(dir, { id: 'spare' })], { logger });
    await until(() => spare.states().spare?.state === 'available', 'the spare server to start', { withinMs: 30_000 });
    expect(processesOf(dir).length).toBe(2);
    await spare.close();
    await until(() => processesOf(dir).length === 1, 'the spare server to exit');
  });
});

describe('a streamable HTTP server (server-everything)', () => {
  it('lists and calls its tools over HTTP', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [everythingMain, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' });
    const servers = connectToolServers(
      [{ id: 'web', transport: 'streamable_http', url: `http://127.0.0.1:${port}/mcp`, headers: {}, tools: { echo: { effect: 'read' } }, tenants: ['*'] }],
      { logger },
    );
    try {
      await until(() => servers.states().web?.state === 'available', 'the HTTP server to list its tools', { withinMs: 45_000 });
      const echo = await servers.call(servers.find('web__echo')!, { message: 'over http' }, { timeoutMs: 10_000 });
      expect(JSON.stringify(echo.content)).toContain('over http');
    } finally {
      await servers.close();
      child.kill('SIGTERM');
    }
  });
});

/** server-filesystem on `share`, as an operator would configure it. */
const filesServer = (share: string) => ({
  id: 'files',
  transport: 'stdio',
  command: process.execPath,
  args: [filesystemMain, share],
  tools: { read_text_file: { effect: 'read' }, write_file: { effect: 'external' } },
});

const WRITE_REQUEST = 'Write the release notes to the shared folder. The release is v2.';
const READ_REQUEST = 'Read the notes file in the shared folder.';
/** The scripted model's call of the filesystem server's write_file (tool call id c1). */
const writeCall = (target: string) => ({ name: 'files__write_file', arguments: { path: target, content: 'release notes v2' }, id: 'c1' });
const readCall = (file: string) => ({ name: 'files__read_text_file', arguments: { path: file }, id: 'c1' });
/** The report of a write the model says it did (by c1), or could not do. */
const wroteReport = (status: 'performed' | 'unresolved' = 'performed') =>
  reportReply({
    quote: WRITE_REQUEST,
    asks: 'effect',
    status,
    calls: status === 'performed' ? ['c1'] : [],
    reason: status === 'performed' ? '' : 'It was rejected.',
  });

describe('a run that writes a file through server-filesystem', () => {
  let stack: RunStack;
  let upstream: Awaited<ReturnType<typeof scriptedUpstream>>;
  let dir: string;
  let configDir: string;
  let probeDir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gws-fs-'));
    probeDir = mkdtempSync(path.join(os.tmpdir(), 'gws-probe-run-'));
    configDir = mkdtempSync(path.join(os.tmpdir(), 'gws-tools-'));
    const file = path.join(configDir, 'tools.json');
    writeFileSync(
      file,
      JSON.stringify({
        servers: [
          filesServer(dir),
          { ...filesServer(dir), id: 'notes', fixed_arguments: { path: path.join(dir, 'fixed-notes.txt'), unused: 'x' } },
          { ...probe(probeDir), tools: { wait: { effect: 'read' } } },
        ],
      }),
    );
    upstream = await scriptedUpstream();
    stack = await startRunStack({ UPSTREAM_BASE_URL: upstream.url, UPSTREAM_MODEL_MAP: '{"svc-workspace":"scripted-model"}', TOOL_SERVERS_FILE: file });
  });
  afterAll(async () => {
    await stack.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(configDir, { recursive: true, force: true });
    rmSync(probeDir, { recursive: true, force: true });
  });

  async function upstreamTenant(): Promise<TestTenant> {
    const t = await newTenant(stack.app.database.db);
    await setRoute(stack.app.database.db, t.tenantId, 'svc-workspace', 'upstream');
    return t;
  }

  async function startRun(t: TestTenant, input: string): Promise<string> {
    const created = await stack.api.post('/v1/agent-runs', { input }, { key: t.key });
    expect(created.status).toBe(201);
    return created.json.run_id as string;
  }

  it('GET /v1/tools lists the server tools with the operator’s classes', async () => {
    const t = await upstreamTenant();
    await until(
      async () =>
        (await stack.api.get('/v1/tools', { key: t.key })).json.data.some(
          (x: { id: string; status: string }) => x.id === 'files__write_file' && x.status === 'available',
        ),
      'the filesystem tools in the catalog',
    );
    const data = (await stack.api.get('/v1/tools', { key: t.key })).json.data as { id: string; effect: string; requires_approval: boolean }[];
    expect(data.find((x) => x.id === 'files__write_file')).toMatchObject({ effect: 'external', requires_approval: true, source: 'server', server: 'files' });
    expect(data.find((x) => x.id === 'files__read_text_file')).toMatchObject({ effect: 'read', requires_approval: false });
    expect(data.find((x) => x.id === 'files__list_directory')).toMatchObject({ effect: 'external', classified: false });
  });

  it('waits for approval showing the exact call, refuses a stale digest, then writes the file once', { timeout: 120_000 }, async () => {
    const t = await upstreamTenant();
    const target = path.join(dir, 'notes.txt');
    const step = writeCall(target);
    upstream.load([{ tool_calls: [step] }, wroteReport()]);
    const runId = await startRun(t, WRITE_REQUEST);
    const waiting = await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval' || isTerminal(r));
    expect(waiting.status).toBe('awaiting_approval');
    const [effect] = waiting.approval.effects;
    expect(effect).toMatchObject({
      tool: 'files__write_file',
      server: 'files',
      server_tool: 'write_file',
      arguments: step.arguments,
      args_digest: expect.stringMatching(/^sha256:/),
    });
    expect(existsSync(target)).toBe(false);

    const stale = await stack.api.post(
      `/v1/agent-runs/${runId}/approval`,
      { decision: 'approve', digests: [`sha256:${'0'.repeat(64)}`] },
      { key: t.approverKey },
    );
    expect(stale.status).toBe(409);
    expect(stale.json.error.code).toBe('approval_stale');
    expect(existsSync(target)).toBe(false);

    const approved = await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve', digests: [effect.args_digest] }, { key: t.approverKey });
    expect(approved.status).toBe(200);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(readFileSync(target, 'utf8')).toBe('release notes v2');
    expect(run.result.steps).toEqual([expect.objectContaining({ step_id: 'step_1', tool: 'files__write_file', status: 'done' })]);
    expect(run.receipt.actions).toEqual([expect.objectContaining({ n: 1, outcome: 'performed', by: ['step_1'] })]);
    // The result reached the model's next turn as untrusted data, and the receipt has it by digest.
    const lastTurn = JSON.stringify(upstream.seen.at(-1)!.body.messages);
    expect(lastTurn).toContain('Data returned by a tool');
    expect(run.status).toBe('completed');
  });

  it('runs a read tool without approval, and gives its result to the model as untrusted data', { timeout: 120_000 }, async () => {
    const t = await upstreamTenant();
    const source = path.join(dir, 'source.txt');
    writeFileSync(source, 'the notes to read');
    upstream.load([{ tool_calls: [readCall(source)] }, reportReply({ quote: READ_REQUEST, calls: ['c1'], answer: 'the notes to read' })]);
    const runId = await startRun(t, READ_REQUEST);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.approval).toBeNull();
    expect(run.status).toBe('completed');
    expect(run.result.steps).toEqual([expect.objectContaining({ tool: 'files__read_text_file', status: 'done' })]);
    const lastTurn = JSON.stringify(upstream.seen.at(-1)!.body.messages);
    expect(lastTurn).toContain('the notes to read');
    expect(lastTurn).toContain('Data returned by a tool');
  });

  it('fails the step when the tool reports an error (isError), and the run needs attention', { timeout: 120_000 }, async () => {
    const t = await upstreamTenant();
    const missing = path.join(dir, 'no-such-file.txt');
    upstream.load([{ tool_calls: [readCall(missing)] }, reportReply({ quote: READ_REQUEST, calls: ['c1'], answer: 'It says nothing.' })]);
    const runId = await startRun(t, READ_REQUEST);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.result.steps).toEqual([expect.objectContaining({ tool: 'files__read_text_file', status: 'failed' })]);
    expect(run.result.steps[0].detail).toContain('isError');
    expect(run.status).toBe('needs_attention');
  });

  it('writes nothing when the approval is rejected, and tells the model why', { timeout: 120_000 }, async () => {
    const t = await upstreamTenant();
    const target = path.join(dir, 'rejected.txt');
    upstream.load([{ tool_calls: [writeCall(target)] }, wroteReport('unresolved')]);
    const runId = await startRun(t, WRITE_REQUEST);
    await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval');
    expect((await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'reject', reason: 'not now' }, { key: t.approverKey })).status).toBe(200);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.approval).toMatchObject({ state: 'rejected', decision_reason: 'not now' });
    expect(existsSync(target)).toBe(false);
    // The rejection went back to the model as the call's result, with the reason.
    const told = upstream.seen.at(-1)!.body.messages.find((m: { role: string; tool_call_id?: string }) => m.role === 'tool' && m.tool_call_id === 'c1');
    expect(JSON.parse(told.content)).toMatchObject({ status: 'rejected', detail: expect.stringContaining('not now') });
    expect(run.receipt.action_boundary).toMatchObject({ effects_requested: ['files__write_file:step_1'], effects_approved: [], effects_performed: [] });
  });

  it('runs edited arguments, checked against the tool schema, and keeps both digests', { timeout: 120_000 }, async () => {
    const t = await upstreamTenant();
    const proposed = path.join(dir, 'proposed.txt');
    const edited = path.join(dir, 'edited.txt');
    upstream.load([{ tool_calls: [writeCall(proposed)] }, wroteReport()]);
    const runId = await startRun(t, WRITE_REQUEST);
    const waiting = await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval');
    const invalid = await stack.api.post(
      `/v1/agent-runs/${runId}/approval`,
      { decision: 'approve', edits: [{ step_id: 'step_1', arguments: { path: edited } }] },
      { key: t.approverKey },
    );
    expect(invalid.status).toBe(400);
    expect(invalid.json.error.param).toBe('edits[0].arguments');
    const ok = await stack.api.post(
      `/v1/agent-runs/${runId}/approval`,
      { decision: 'approve', edits: [{ step_id: 'step_1', arguments: { path: edited, content: 'edited notes' } }] },
      { key: t.approverKey },
    );
    expect(ok.status).toBe(200);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(readFileSync(edited, 'utf8')).toBe('edited notes');
    expect(existsSync(proposed)).toBe(false);
    expect(run.approval.effects[0]).toMatchObject({
      proposed_digest: waiting.approval.effects[0].args_digest,
      args_digest: expect.not.stringMatching(waiting.approval.effects[0].args_digest),
    });
  });

  it('sets the operator’s fixed arguments on every call: models never see them, the approver does, an edit cannot change them', {
    timeout: 120_000,
  }, async () => {
    const t = await upstreamTenant();
    const fixedPath = path.join(dir, 'fixed-notes.txt');
    const elsewhere = path.join(dir, 'elsewhere.txt');
    const listed = (await stack.api.get('/v1/tools', { key: t.key })).json.data as { id: string; input_schema: any; fixed_arguments?: unknown }[];
    const shown = listed.find((x) => x.id === 'notes__write_file')!;
    expect(shown.fixed_arguments).toEqual({ path: fixedPath });
    expect(Object.keys(shown.input_schema.properties)).toEqual(['content']);
    expect(shown.input_schema.required).toEqual(['content']);
    expect(listed.find((x) => x.id === 'files__write_file')!.input_schema.required).toContain('path');

    // The model writes a path of its own where the operator fixed one: the operator's is what runs.
    upstream.load([{ tool_calls: [{ name: 'notes__write_file', arguments: { content: 'release notes v2', path: elsewhere }, id: 'c1' }] }, wroteReport()]);
    const runId = await startRun(t, WRITE_REQUEST);
    const waiting = await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval' || isTerminal(r));
    expect(waiting.status).toBe('awaiting_approval');
    expect(waiting.approval.effects[0].arguments).toEqual({ content: 'release notes v2', path: fixedPath });
    const offered = upstream.seen[0]!.body.tools!.find((x: { function: { name: string } }) => x.function.name === 'notes__write_file');
    expect(Object.keys(offered.function.parameters.properties)).toEqual(['content']);

    const changed = await stack.api.post(
      `/v1/agent-runs/${runId}/approval`,
      { decision: 'approve', edits: [{ step_id: 'step_1', arguments: { content: 'edited notes', path: elsewhere } }] },
      { key: t.approverKey },
    );
    expect(changed.status).toBe(400);
    expect(changed.json.error.param).toBe('edits[0].arguments.path');
    const ok = await stack.api.post(
      `/v1/agent-runs/${runId}/approval`,
      { decision: 'approve', edits: [{ step_id: 'step_1', arguments: { content: 'edited notes' } }] },
      { key: t.approverKey },
    );
    expect(ok.status).toBe(200);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.approval.effects[0].arguments).toEqual({ content: 'edited notes', path: fixedPath });
    expect(readFileSync(fixedPath, 'utf8')).toBe('edited notes');
    expect(existsSync(elsewhere)).toBe(false);
    expect(run.status).toBe('completed');
  });

  it('sends MCP cancellation to the server when the run is cancelled mid-call', { timeout: 120_000 }, async () => {
    const t = await upstreamTenant();
    upstream.load([{ tool_calls: [{ name: 'probe__wait', arguments: { seconds: 90 } }] }]);
    const runId = await startRun(t, 'Wait for the maintenance window.');
    await until(async () => (await stack.app.database.db.select().from(toolCalls).where(eq(toolCalls.runId, runId))).length === 1, 'the call to start', {
      withinMs: 60_000,
    });
    expect((await stack.api.post(`/v1/agent-runs/${runId}/cancel`, {}, { key: t.key })).status).toBe(202);
    await until(() => existsSync(path.join(probeDir, 'cancelled')), 'the server to see notifications/cancelled', { withinMs: 30_000 });
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run).toMatchObject({ status: 'failed', failure: { code: 'cancelled' } });
  });
});

describe('a worker killed during an approved write', () => {
  let stack: RunStack;
  let upstream: Awaited<ReturnType<typeof scriptedUpstream>>;
  let dir: string;
  let env: Record<string, string>;
  let replacement: RunningWorker | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gws-fs-kill-'));
    const file = path.join(dir, 'tools.json');
    mkdirSync(path.join(dir, 'share'));
    writeFileSync(file, JSON.stringify({ servers: [filesServer(path.join(dir, 'share'))] }));
    upstream = await scriptedUpstream();
    env = { UPSTREAM_BASE_URL: upstream.url, UPSTREAM_MODEL_MAP: '{"svc-workspace":"scripted-model"}', TOOL_SERVERS_FILE: file };
    stack = await startRunStack(env);
    await stack.worker.stop(); // each run's first worker is a crashing process
  });
  afterAll(async () => {
    await stack.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a worker process that kills itself as `crash` says, and a run that writes `target` once approved; returns when the worker is dead. */
  async function approvedWriteOnCrashingWorker(crash: Record<string, string>, target: string) {
    const worker = spawnCrashingWorker(stack.taskQueue, { ...env, ...crash });
    const died = new Promise((r) => worker.once('exit', r));
    const t = await newTenant(stack.app.database.db);
    await setRoute(stack.app.database.db, t.tenantId, 'svc-workspace', 'upstream');
    upstream.load([{ tool_calls: [writeCall(target)] }, wroteReport()]);
    const created = await stack.api.post('/v1/agent-runs', { input: WRITE_REQUEST }, { key: t.key });
    const runId = created.json.run_id as string;
    await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval', 60_000);
    expect((await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve' }, { key: t.approverKey })).status).toBe(200);
    await died;
    expect(worker.signalCode).toBe('SIGKILL');
    return { t, runId };
  }

  async function toolCallRows(runId: string) {
    return await stack.app.database.db.select().from(toolCalls).where(eq(toolCalls.runId, runId));
  }

  /**
   * A run whose approved write is interrupted as `crash` says; the file is then changed behind the
   * service's back (a second write would put the notes back), and a replacement worker ends the run.
   */
  async function writeInterruptedBy(crash: Record<string, string>, name: string) {
    const target = path.join(dir, 'share', name);
    const { t, runId } = await approvedWriteOnCrashingWorker(crash, target);
    expect(readFileSync(target, 'utf8')).toBe('release notes v2');
    writeFileSync(target, 'changed after the crash');
    replacement = await startTestWorker(stack.app.database.db, stack.taskQueue, env);
    try {
      const run = await waitForRun(stack.api, t.key, runId, isTerminal, 90_000);
      expect(readFileSync(target, 'utf8')).toBe('changed after the crash');
      return { run, calls: await toolCallRows(runId) };
    } finally {
      await replacement.stop();
      replacement = undefined;
    }
  }

  it('after the server wrote and before the call was recorded done: not sent again, the step is outcome_unknown', { timeout: 150_000 }, async () => {
    const { run, calls } = await writeInterruptedBy({ CRASH_DURING_TOOL_CALL: 'files__write_file' }, 'unknown.txt');
    expect(run.status).toBe('needs_attention');
    expect(run.result.steps).toEqual([expect.objectContaining({ step_id: 'step_1', tool: 'files__write_file', status: 'outcome_unknown' })]);
    expect(run.receipt.action_boundary).toMatchObject({ effects_performed: [], effects_outcome_unknown: [expect.stringContaining('step_1')] });
    expect(calls).toEqual([expect.objectContaining({ status: 'started' })]);
  });

  it('after the call was recorded done and before the activity reported: not sent again, the recorded result counts', { timeout: 150_000 }, async () => {
    const { run, calls } = await writeInterruptedBy({ CRASH_AFTER_ACTIVITY: 'runTool' }, 'done.txt');
    expect(run.status).toBe('completed');
    expect(run.result.steps).toEqual([expect.objectContaining({ step_id: 'step_1', tool: 'files__write_file', status: 'done' })]);
    expect(run.receipt.action_boundary.effects_performed).toEqual([expect.stringContaining('step_1')]);
    expect(calls).toEqual([expect.objectContaining({ status: 'done' })]);
  });
});
